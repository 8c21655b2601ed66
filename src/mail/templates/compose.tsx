// One description of a message gives both of its parts, plain text and HTML, so they never say
// different things. The HTML is rendered by Preact (every value escaped), styled inline, and loads
// nothing: no images, fonts, tracking pixels or rewritten links.
import { render } from 'preact-render-to-string';

/** Who sends: the site's name and its public address (SITE_NAME, BASE_URL). */
export interface MailSite {
  name: string;
  baseUrl: string;
}

export interface MailContent {
  /** The template's name, kept with the queued message (`idsvc mail list`). */
  kind: string;
  subject: string;
  text: string;
  html: string;
}

export interface MailBody {
  /** Paragraphs before the button. */
  intro: string[];
  /** The one thing to do, as a button (and its address written out, for copying). */
  action?: { label: string; url: string };
  /** Paragraphs after the button: what happens otherwise, what to do if it was not you. */
  outro?: string[];
}

const wrapStyle =
  'font-family: system-ui, -apple-system, Segoe UI, Roboto, sans-serif; font-size: 16px; line-height: 1.5; color: #1f2328; max-width: 560px; margin: 0 auto; padding: 24px;';
const buttonStyle =
  'display: inline-block; background: #1f6feb; color: #ffffff; text-decoration: none; padding: 10px 18px; border-radius: 6px; font-weight: 600;';
const smallStyle = 'font-size: 13px; color: #57606a;';

function Html({ site, subject, body }: { site: MailSite; subject: string; body: MailBody }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{subject}</title>
      </head>
      <body style="margin: 0; padding: 0; background: #ffffff;">
        <div style={wrapStyle}>
          <p style="font-weight: 700; font-size: 18px; margin: 0 0 16px;">{site.name}</p>
          {body.intro.map((p) => (
            <p>{p}</p>
          ))}
          {body.action ? (
            <>
              <p style="margin: 24px 0;">
                <a href={body.action.url} style={buttonStyle}>
                  {body.action.label}
                </a>
              </p>
              <p style={smallStyle}>
                Or copy this address into your browser:
                <br />
                <span style="word-break: break-all;">{body.action.url}</span>
              </p>
            </>
          ) : null}
          {(body.outro ?? []).map((p) => (
            <p>{p}</p>
          ))}
          <hr style="border: none; border-top: 1px solid #d0d7de; margin: 24px 0 12px;" />
          <p style={smallStyle}>
            {site.name} · <a href={site.baseUrl}>{site.baseUrl}</a>
            <br />
            This message was sent automatically; replies are not read.
          </p>
        </div>
      </body>
    </html>
  );
}

function text(site: MailSite, body: MailBody): string {
  const parts = [...body.intro];
  if (body.action) parts.push(`${body.action.label}:\n${body.action.url}`);
  parts.push(...(body.outro ?? []));
  parts.push(`-- \n${site.name} · ${site.baseUrl}\nThis message was sent automatically; replies are not read.`);
  return `${parts.join('\n\n')}\n`;
}

export function composeMail(site: MailSite, kind: string, subject: string, body: MailBody): MailContent {
  return { kind, subject, text: text(site, body), html: `<!doctype html>${render(<Html site={site} subject={subject} body={body} />)}` };
}
