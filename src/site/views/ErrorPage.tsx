import { Layout } from './Layout.js';

const TITLES: Record<number, string> = {
  400: 'That request did not work',
  403: 'Not allowed',
  404: 'Page not found',
  413: 'Too much data',
  429: 'Please slow down',
  500: 'Something went wrong',
  503: 'Back in a moment',
};

export function ErrorPage({ status, message }: { status: number; message: string }) {
  const title = TITLES[status] ?? (status >= 500 ? TITLES[500]! : TITLES[400]!);
  return (
    <Layout title={title} narrow>
      <div class="card error-card">
        <p class="status-code" aria-hidden="true">
          {status}
        </p>
        <h1>{title}</h1>
        <p>{message}</p>
        <p class="actions">
          <a class="button secondary" href="/">
            Go to the home page
          </a>
        </p>
      </div>
    </Layout>
  );
}
