import { useState } from 'preact/hooks';
import { isHttpUrl } from './identity.js';

/** The service's icon, or its initial when there is none or it does not load. Decorative. */
export function Favicon({ src, name }: { src: string; name: string }) {
  const [broken, setBroken] = useState(false);
  const initial = (Array.from(name.trim())[0] ?? '?').toUpperCase();
  return (
    <span class="fav" aria-hidden="true">
      {!broken && isHttpUrl(src) ? (
        <img src={src} alt="" width={16} height={16} loading="lazy" decoding="async" referrerpolicy="no-referrer" onError={() => setBroken(true)} />
      ) : (
        initial
      )}
    </span>
  );
}
