// The photo page: the avatar partners and Gravatar clients see, a form to upload a picture, and
// one to remove it and go back to the letter avatar.
import { initialsOf } from '../../gravatar/letter-avatar.js';
import { CsrfField } from './fields.js';
import { AccountNav } from './AccountNav.js';
import { Layout, Notice, type Viewer } from './Layout.js';

export interface PhotoPageProps {
  viewer: Viewer;
  displayName: string;
  /** The stored photo's digest, when there is one (it names the preview, so a new photo is not a cached old one). */
  photoDigest?: string | undefined;
  visible: boolean;
  avatarUrl: string;
  maxMegabytes: number;
  notice?: string | undefined;
  error?: string | undefined;
}

export function PhotoPage(p: PhotoPageProps) {
  return (
    <Layout title="Your photo" viewer={p.viewer} narrow>
      <AccountNav current="profile" />
      <h1>Your photo</h1>
      {p.notice ? <Notice kind="success">{p.notice}</Notice> : null}
      {p.error ? (
        <div class="alert error" role="alert" tabIndex={-1} data-autofocus>
          <p>{p.error}</p>
        </div>
      ) : null}
      <section class="card" aria-labelledby="photo-now">
        <h2 id="photo-now">Now</h2>
        <div class="photo-row">
          {p.photoDigest ? (
            <img class="avatar photo" src={`/account/photo/image?v=${p.photoDigest}`} alt="" width={80} height={80} />
          ) : (
            <span class="avatar" role="img" aria-label="Your letter avatar">
              {initialsOf(p.displayName)}
            </span>
          )}
          <p class="hint">
            {p.photoDigest ? 'Your photo.' : 'Your letter avatar: the initials of your public name.'}{' '}
            {p.visible ? (
              <>
                Anyone can see it at <a href={p.avatarUrl}>{p.avatarUrl}</a>, as partner sites and Gravatar-compatible apps show it.
              </>
            ) : (
              'Nobody else sees it while you are not visible: your avatar address then answers as for an unknown person.'
            )}
          </p>
        </div>
      </section>
      <section class="card" aria-labelledby="photo-upload">
        <h2 id="photo-upload">{p.photoDigest ? 'Upload a new photo' : 'Upload a photo'}</h2>
        <p class="hint">
          A JPEG, PNG or WebP picture of at most {p.maxMegabytes} MB. It is cropped to a square from the centre, and only the picture is kept: no location,
          camera or other details in the file.
        </p>
        <form method="post" action="/account/photo" enctype="multipart/form-data">
          <CsrfField token={p.viewer.csrf} />
          <div class="field">
            <label for="photo">Picture</label>
            <input id="photo" name="photo" type="file" accept="image/jpeg,image/png,image/webp" required />
          </div>
          <button type="submit" class="button">
            Upload
          </button>
        </form>
      </section>
      {p.photoDigest ? (
        <section class="card" aria-labelledby="photo-remove">
          <h2 id="photo-remove">Remove your photo</h2>
          <p class="hint">Your avatar goes back to your initials.</p>
          <form method="post" action="/account/photo/remove">
            <CsrfField token={p.viewer.csrf} />
            <button type="submit" class="button secondary">
              Remove photo
            </button>
          </form>
        </section>
      ) : null}
    </Layout>
  );
}
