// multipart/form-data for the one site form that sends a file (the photo). Parsed into the request
// body like any form, before validation, so the site's CSRF check reads `_csrf` from it as from
// every other form. Bounded: one file of at most `maxFileBytes` (more is read and dropped, and the
// file marked too large, so the form can say so), one short field, a few parts; a body announced
// far larger than that is refused before it is read.
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../domain/errors.js';

export interface UploadedFile {
  data: Buffer;
  /** The file was larger than allowed: `data` is empty. */
  tooLarge: boolean;
}

/** The schema of a file field, for formSchema(). */
export const fileField = Type.Optional(Type.Unsafe<UploadedFile>({ type: 'object' }));

/** What the multipart envelope (boundaries, part headers, the CSRF field) may add to the file. */
const ENVELOPE_BYTES = 16 * 1024;
/** Past this many bytes beyond the limit the rest is not read: the answer is an error at once. */
const DRAIN_BYTES = 4 * 1024 * 1024;

const tooLarge = (maxFileBytes: number) =>
  new ApiError('payload_too_large', `The picture is larger than ${maxFileBytes / 1024 / 1024} MB. Choose a smaller one.`);

/** Lets the routes of `app` (an encapsulated plugin) take multipart forms with one file. */
export function acceptFileForms(app: FastifyInstance, maxFileBytes: number): void {
  app.addContentTypeParser('multipart/form-data', (request, payload, done) => {
    const declared = Number(request.headers['content-length']);
    if (declared > maxFileBytes + ENVELOPE_BYTES + DRAIN_BYTES) {
      done(tooLarge(maxFileBytes), undefined);
      return;
    }
    const body: Record<string, string | UploadedFile> = {};
    let finished = false;
    const finish = (err: Error | null) => {
      if (finished) return;
      finished = true;
      if (err) {
        payload.unpipe();
        payload.resume();
      }
      done(err, err ? undefined : body);
    };
    let busboy: BusboyInstance;
    try {
      busboy = new Busboy({
        headers: { ...request.headers, 'content-type': String(request.headers['content-type']) },
        limits: { fields: 1, fieldSize: 256, fieldNameSize: 32, files: 1, fileSize: maxFileBytes, parts: 2, headerPairs: 8 },
      });
    } catch {
      done(new ApiError('invalid_request', 'The form could not be read.'), undefined);
      return;
    }
    let read = 0;
    payload.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > maxFileBytes + ENVELOPE_BYTES + DRAIN_BYTES) finish(tooLarge(maxFileBytes));
    });
    busboy.on('field', (name, value) => {
      body[name] = value;
    });
    // The body is complete once the envelope is parsed and every file has been read to its end.
    let filesOpen = 0;
    let parsed = false;
    const settle = () => {
      if (parsed && filesOpen === 0) finish(null);
    };
    busboy.on('file', (name, stream) => {
      filesOpen++;
      let chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        if (!stream.truncated) chunks.push(chunk);
      });
      stream.on('limit', () => {
        chunks = [];
      });
      stream.on('end', () => {
        body[name] = stream.truncated ? { data: Buffer.alloc(0), tooLarge: true } : { data: Buffer.concat(chunks), tooLarge: false };
        filesOpen--;
        settle();
      });
    });
    busboy.on('error', () => finish(new ApiError('invalid_request', 'The form could not be read.')));
    busboy.on('finish', () => {
      parsed = true;
      settle();
    });
    payload.pipe(busboy);
  });
}
