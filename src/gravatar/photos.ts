// Photo avatars: what the site keeps of an uploaded picture, and the sizes /avatar/{hash} serves.
//
// An upload is never stored as sent. Its first bytes must say JPEG, PNG or WebP; its header must
// name at most PHOTO_MAX_INPUT_PIXELS before anything is decoded (a small file can declare a huge
// picture); then sharp decodes it in libuv's thread pool, off the event loop, turns it upright,
// crops it square from the centre, flattens any transparency onto white and encodes a new JPEG
// that carries no metadata (no EXIF, no location, no camera). Sizes are made from that one stored
// picture on demand and kept in a bounded cache named by the stored picture's digest, so a change
// of photo can never be answered from an old entry.
import type { Handle } from '../db/handle.js';
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type Sharp from 'sharp';
import { etagOf } from '../http/cache-headers.js';
import { photoByDigest, photoStampOf, type StoredPhoto } from '../repositories/avatar-photos.js';

/** The largest upload read at all; a larger body is refused before it is decoded. */
export const PHOTO_UPLOAD_MAX_BYTES = 5 * 1024 * 1024;
/** The most pixels a picture's header may declare: decoding is refused past it (decompression bombs). */
export const PHOTO_MAX_INPUT_PIXELS = 40_000_000;
/** The stored square's side: enough for every size up to the largest without visible loss. */
export const PHOTO_STORED_SIDE = 1024;
/** The smallest picture worth showing as a face. */
export const PHOTO_MIN_SIDE = 16;
/** Memory for rendered sizes: about 2,000 small avatars. */
const RENDERED_CACHE_BYTES = 32 * 1024 * 1024;

// sharp (libvips) is loaded at the first picture, not at start-up: it is one of the costliest
// modules to load, and most starts never handle a photo. libvips keeps its own cache of recent
// operations; ours is the bounded one. One thread per image: uploads and resizes then share
// libuv's pool with argon2 instead of taking every core.
let sharpModule: Promise<typeof Sharp> | undefined;
const loadSharp = () =>
  (sharpModule ??= import('sharp').then((loaded) => {
    // A CommonJS module: its default export is the function the static import gives.
    const sharp = loaded.default as typeof Sharp;
    sharp.cache(false);
    sharp.concurrency(1);
    return sharp;
  }));

export class PhotoRefused extends Error {
  constructor(
    message: string,
    readonly status: 400 | 413 = 400,
  ) {
    super(message);
  }
}

const ACCEPTED = 'Choose a JPEG, PNG or WebP picture.';

/** The format the file's first bytes announce, or undefined: nothing is decoded to know this. */
export function sniffFormat(bytes: Uint8Array): 'jpeg' | 'png' | 'webp' | undefined {
  const at = (offset: number, ascii: string) => Buffer.from(bytes.subarray(offset, offset + ascii.length)).toString('latin1') === ascii;
  // A JPEG's first segment after its start marker carries a length of at least 2: a file that fails
  // this is refused here, before the decoder scans megabytes for a marker.
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return ((bytes[4] ?? 0) << 8) + (bytes[5] ?? 0) >= 2 ? 'jpeg' : undefined;
  if (at(0, '\x89PNG\r\n\x1a\n')) return 'png';
  if (at(0, 'RIFF') && at(8, 'WEBP')) return 'webp';
  return undefined;
}

const megapixels = (n: number) => `${Math.round(n / 100_000) / 10} megapixels`;

/** The upload as it will be stored, or PhotoRefused with a message for the person who sent it. */
export async function preparePhoto(upload: Buffer): Promise<StoredPhoto> {
  if (upload.length === 0) throw new PhotoRefused(`The file is empty. ${ACCEPTED}`);
  if (upload.length > PHOTO_UPLOAD_MAX_BYTES)
    throw new PhotoRefused(`The picture is larger than ${PHOTO_UPLOAD_MAX_BYTES / 1024 / 1024} MB. Choose a smaller one.`, 413);
  const format = sniffFormat(upload);
  if (!format) throw new PhotoRefused(`That file is not a picture idsvc can use. ${ACCEPTED}`);
  const options = { limitInputPixels: PHOTO_MAX_INPUT_PIXELS, failOn: 'error', pages: 1 } as const;
  const sharp = await loadSharp();
  let width: number;
  let height: number;
  try {
    const meta = await sharp(upload, { ...options, limitInputPixels: false }).metadata();
    if (meta.format !== format) throw new Error('format mismatch');
    width = meta.width;
    height = meta.height;
  } catch {
    throw new PhotoRefused(`That file could not be read as a ${format.toUpperCase()} picture. ${ACCEPTED}`);
  }
  if (width * height > PHOTO_MAX_INPUT_PIXELS) {
    throw new PhotoRefused(
      `The picture is ${width} × ${height} pixels (${megapixels(width * height)}); at most ${megapixels(PHOTO_MAX_INPUT_PIXELS)} are accepted. Make it smaller first.`,
      413,
    );
  }
  const side = Math.min(width, height, PHOTO_STORED_SIDE);
  if (side < PHOTO_MIN_SIDE) throw new PhotoRefused(`The picture is ${width} × ${height} pixels; it needs at least ${PHOTO_MIN_SIDE} pixels each way.`);
  let image: Buffer;
  try {
    image = await sharp(upload, options)
      .rotate()
      .resize(side, side, { fit: 'cover', position: 'centre' })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: 88, mozjpeg: true })
      .toBuffer();
  } catch {
    throw new PhotoRefused(`That file could not be read as a ${format.toUpperCase()} picture. ${ACCEPTED}`);
  }
  return { image, mediaType: 'image/jpeg', digest: createHash('sha256').update(image).digest('base64url'), side };
}

/** A photo at one size, with the ETag of its bytes: hashed once when rendered, not on every request. */
export interface RenderedPhoto {
  bytes: Buffer;
  etag: string;
}

const rendered = new LRUCache<string, RenderedPhoto>({ maxSize: RENDERED_CACHE_BYTES, sizeCalculation: (r) => Math.max(1, r.bytes.length + r.etag.length) });
const rendering = new Map<string, Promise<RenderedPhoto>>();

const keep = (key: string, bytes: Buffer): RenderedPhoto => {
  const photo = { bytes, etag: etagOf(bytes) };
  rendered.set(key, photo);
  return photo;
};

/** The rendered size when this server has it in memory. */
function renderedPhoto(digest: string, size: number): RenderedPhoto | undefined {
  return rendered.get(`${digest}:${size}`);
}

/** The stored picture at `size` pixels square (resized in the thread pool once, then from memory). */
export async function renderPhoto(photo: StoredPhoto, size: number): Promise<RenderedPhoto> {
  const key = `${photo.digest}:${size}`;
  const kept = rendered.get(key);
  if (kept) return kept;
  if (size === photo.side) return keep(key, photo.image);
  // Requests for the same size at the same time share one resize.
  let pending = rendering.get(key);
  if (!pending) {
    pending = loadSharp()
      .then((sharp) =>
        sharp(photo.image, { limitInputPixels: PHOTO_STORED_SIDE * PHOTO_STORED_SIDE })
          .resize(size, size, { fit: 'cover' })
          .jpeg({ quality: 85, mozjpeg: true })
          .toBuffer(),
      )
      .then((out) => keep(key, out))
      .finally(() => rendering.delete(key));
    rendering.set(key, pending);
  }
  return pending;
}

/**
 * The user's photo at `size` pixels, or undefined when they have none. The digest is read first
 * (one small row); the picture itself only when this size of it is not in memory.
 */
export async function photoAvatar(from: Handle, userRef: number, size: number): Promise<RenderedPhoto | undefined> {
  // Twice at most: the photo can be replaced between reading its digest and reading it.
  for (let attempt = 0; attempt < 2; attempt++) {
    const stamp = await photoStampOf(from, userRef);
    if (!stamp) return undefined;
    const kept = renderedPhoto(stamp.digest, size);
    if (kept) return kept;
    const photo = await photoByDigest(from, userRef, stamp.digest);
    if (photo) return renderPhoto(photo, size);
  }
  return undefined;
}
