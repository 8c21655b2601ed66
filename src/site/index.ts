// The site (SPEC §12): server-rendered pages for end users. Registered by app.ts.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';

export async function registerSite(_app: FastifyInstance, _ctx: AppContext): Promise<void> {}

/** The HTML answer for an error on a site page. */
export function renderSiteError(status: number, message: string): string {
  return `<!doctype html><html lang="en"><meta charset="utf-8"><title>${status}</title><p>${message.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)}</p></html>`;
}
