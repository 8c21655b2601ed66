// What the passkey script sends and gets back: the browser's WebAuthn answers as
// @simplewebauthn/browser encodes them (base64url strings), each field bounded, and the one shape of
// every answer to the script.
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';

const b64url = (maxLength: number) => Type.String({ maxLength, pattern: '^[A-Za-z0-9_-]*$' });
// A credential id is at most 1,023 bytes (WebAuthn §5.8.3); its base64url, a little more.
const credentialId = b64url(1400);
const transports = Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 8 }));
const attachment = Type.Optional(Type.Union([Type.Literal('platform'), Type.Literal('cross-platform')]));
// Extension outputs are the browser's to fill; none is read, so any small object will do.
const extensions = Type.Object({}, { additionalProperties: true, maxProperties: 16 });

export const registrationResponse = Type.Object(
  {
    id: credentialId,
    rawId: credentialId,
    type: Type.Literal('public-key'),
    response: Type.Object(
      {
        clientDataJSON: b64url(4096),
        attestationObject: b64url(16384),
        authenticatorData: Type.Optional(b64url(8192)),
        transports,
        publicKeyAlgorithm: Type.Optional(Type.Integer()),
        publicKey: Type.Optional(b64url(8192)),
      },
      { additionalProperties: false },
    ),
    authenticatorAttachment: attachment,
    clientExtensionResults: extensions,
  },
  { additionalProperties: false },
);

export const authenticationResponse = Type.Object(
  {
    id: credentialId,
    rawId: credentialId,
    type: Type.Literal('public-key'),
    response: Type.Object(
      {
        clientDataJSON: b64url(4096),
        authenticatorData: b64url(8192),
        signature: b64url(8192),
        userHandle: Type.Optional(b64url(128)),
      },
      { additionalProperties: false },
    ),
    authenticatorAttachment: attachment,
    clientExtensionResults: extensions,
  },
  { additionalProperties: false },
);

/** The script follows `redirect`, or shows `error` beside the button. */
export function sendJson(reply: FastifyReply, status: number, body: { redirect: string } | { error: string } | { options: unknown }): FastifyReply {
  return reply.code(status).header('Cache-Control', 'no-store').type('application/json; charset=utf-8').send(JSON.stringify(body));
}
