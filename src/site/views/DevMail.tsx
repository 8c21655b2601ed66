// The development inbox: each message's recipient, subject, time and text, links clickable.
import type { ComponentChildren } from 'preact';
import { Layout, When, type Viewer } from './Layout.js';

export interface DevMail {
  file: string;
  to: string;
  subject: string;
  date: number;
  text: string;
}

// Up to the next space or angle bracket: how a link ends in idsvc's plain-text mails.
const LINK = /https?:\/\/[^\s<>"]+/g;

function withLinks(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  let last = 0;
  for (const m of text.matchAll(LINK)) {
    out.push(text.slice(last, m.index));
    out.push(<a href={m[0]}>{m[0]}</a>);
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}

export function DevMailPage({ viewer, dir, mails }: { viewer: Viewer | null; dir: string; mails: DevMail[] }) {
  return (
    <Layout title="Development inbox" viewer={viewer}>
      <h1>Development inbox</h1>
      <p class="hint">
        The mail idsvc wrote to <code>{dir}</code>, newest first (development only: with <code>NODE_ENV=production</code> or an <code>SMTP_URL</code> this page
        does not exist). The links work here as they would in the recipient's mail.
      </p>
      {mails.length === 0 ? <p class="empty">No mail yet.</p> : null}
      {mails.map((m) => (
        <article class="card dev-mail" key={m.file}>
          <h2>{m.subject}</h2>
          <p class="hint">
            To {m.to} · <When ms={m.date} /> · <code>{m.file}</code>
          </p>
          <pre class="dev-mail-text">{withLinks(m.text)}</pre>
        </article>
      ))}
    </Layout>
  );
}
