// The configuration is defined once, beside the server code that writes it.
export type { WidgetBootConfig, WidgetService } from '../../src/widget/boot-script.js';

/** One entry of the catalogue JSON (config.catalogueUrl), in "combined" order. */
export interface CatalogueEntry {
  svcId: string;
  svcName: string;
  svcLeftURL: string;
  svcRightURL: string;
  regexCheck: string | null;
  urlBuilder: string | null;
  svcFavicon: string;
}

declare global {
  interface Window {
    /** Defined by the page; called on every add, change and removal (blank usrSvcId: removal). */
    service_change_callback_idsvc?: (userIdentifier: string, svcId: string, svcDisplay: string, usrSvcId: string, svcUrl: string) => void;
    /** Defined by the page; called when the user submits the sync form. */
    init_sync_user_idsvc?: (userIdentifier: string, email: string, password: string) => void;
    /** Defined by the widget; the page hands it the sync_user answer. */
    handle_sync_results_idsvc?: (result: unknown) => boolean;
  }
}
