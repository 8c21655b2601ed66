// The named shapes of the partner API's answers, as the OpenAPI document's `components.schemas`
// (generated clients get a type per name). Each carries its XML element name: the XML answer is
// the same tree as the JSON one, with list entries as elements of that name.
import { Type, type TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '../domain/errors.js';
import { STATUS_OF } from '../domain/errors.js';
import { PROFILE_FIELD_NAMES, PROFILE_MAX_LENGTH } from '../domain/profile.js';
import { VERIFICATION_METHODS } from '../verification/methods.js';

export type ComponentName = 'Error' | 'Service' | 'UserService' | 'PushedService' | 'Profile' | 'Contact' | 'ClaimingUser';

/** A reference to one of COMPONENT_SCHEMAS, as the document writes it. */
export const ref = (name: ComponentName): TSchema => Type.Unsafe({ $ref: `#/components/schemas/${name}` });

const verified = Type.Boolean({
  description:
    'In XML `TRUE` or `FALSE`; in JSON a boolean (a change within API version 1: earlier servers sent the strings `"TRUE"`/`"FALSE"`; docs/spec.md, "Changes within API version 1"). True when idsvc proved the identity is the person\'s (a rel="me" link back, a proof text in the profile, a DNS TXT record, an ATProto handle; docs/verification.md) or an operator vouched for it. Re-checked daily; only a definite negative confirmed after a delay removes it.',
});

const jsonOnly = 'JSON answers only, and only on a verified entry; XML answers carry no evidence.';
const evidence = {
  verifiedBy: Type.Optional(
    Type.Union(
      [...VERIFICATION_METHODS].map((m) => Type.Literal(m)),
      { description: `How the mark was earned. ${jsonOnly}` },
    ),
  ),
  verifiedAt: Type.Optional(Type.String({ description: `When the mark was first earned (ISO 8601, UTC). ${jsonOnly}` })),
  lastCheckedAt: Type.Optional(Type.String({ description: `The last check that kept the mark (ISO 8601, UTC). ${jsonOnly}` })),
  evidenceUrl: Type.Optional(
    Type.String({ description: `What proves it: the page or record read, or \`dns:TXT:<name>\`; absent for an operator's mark. ${jsonOnly}` }),
  ),
};

export const COMPONENT_SCHEMAS = {
  Error: Type.Object(
    {
      code: Type.Union(
        (Object.keys(STATUS_OF) as ErrorCode[]).map((c) => Type.Literal(c)),
        { description: 'Stable machine-readable code; the HTTP status follows from it (docs/spec.md, "Errors").' },
      ),
      message: Type.String({ description: 'For people; it never repeats what the request sent.' }),
    },
    { additionalProperties: false, xml: { name: 'error' }, description: 'Every error answer of the API, in the format the request chose.' },
  ),
  Service: Type.Object(
    Object.fromEntries(
      ['svcId', 'svcName', 'svcURL', 'svcLeftURL', 'svcRightURL', 'svcMobileURL', 'svcIphoneURL', 'svcFavicon', 'svcIcon', 'svcIphoneIcon'].map((f) => [
        f,
        Type.String(),
      ]),
    ),
    {
      additionalProperties: false,
      xml: { name: 'service' },
      description: 'A catalogue entry: a profile URL is `svcLeftURL` + the identifier + `svcRightURL`; empty strings where the catalogue has nothing.',
    },
  ),
  UserService: Type.Object(
    {
      svcId: Type.String(),
      svcName: Type.String(),
      usrSvcId: Type.Optional(
        Type.String({
          description:
            "Only in answers to a proven partner (api_token, or a signed widget URL): a trusted partner, a pro user's entry, or the partner's own push. Never with the api_key alone.",
        }),
      ),
      url: Type.String({ description: 'The profile page on the service; empty when the catalogue has no pattern for it.' }),
      verified,
      svcFavicon: Type.String(),
      ...evidence,
    },
    { additionalProperties: false, xml: { name: 'service' }, description: 'One identity a person has on a service, sorted by svcName in every list.' },
  ),
  PushedService: Type.Object(
    { svcId: Type.String(), usrSvcId: Type.String({ description: 'As stored; empty when the entry was removed.' }) },
    { additionalProperties: false, xml: { name: 'service' }, description: 'What update_service stored.' },
  ),
  Profile: Type.Object(
    {
      userId: Type.String(),
      url: Type.String({ description: "The user's public profile page on this idsvc." }),
      ...Object.fromEntries(PROFILE_FIELD_NAMES.map((f) => [f, Type.Optional(Type.String({ maxLength: PROFILE_MAX_LENGTH[f] }))])),
    },
    {
      additionalProperties: false,
      xml: { name: 'profile' },
      description: 'userId and url always; each other field only when filled in and visible to the caller.',
    },
  ),
  Contact: Type.Object(
    {
      identifier: Type.String({ description: 'The contact as the request gave it.' }),
      userId: Type.String(),
      services: Type.Array(ref('UserService'), { xml: { name: 'services', wrapped: true } }),
    },
    {
      additionalProperties: false,
      xml: { name: 'contact' },
      description: 'A contact who is an opted-in, discoverable user, with the public view of their identities.',
    },
  ),
  ClaimingUser: Type.Object(
    { userId: Type.String(), url: Type.String({ description: "The user's public profile page." }), verified },
    { additionalProperties: false, xml: { name: 'user' }, description: 'A user who claims the identity asked about.' },
  ),
} satisfies Record<ComponentName, TSchema>;

/** The answer of an operation: the root element (XML) or only property (JSON), and what it holds. */
export interface Answer {
  readonly root: string;
  readonly value: TSchema;
}

/** A list answer: `<root><item/>…</root>` in XML, `{"root": [ … ]}` in JSON. */
export const listAnswer = (root: string, item: ComponentName): Answer => ({ root, value: Type.Array(ref(item), { xml: { name: root, wrapped: true } }) });
/** An answer of one named object, whose element name is the root. */
export const objectAnswer = (root: string, component: ComponentName): Answer => ({ root, value: ref(component) });
/** An answer of one text value: `<root>text</root>`, `{"root": "text"}`. */
export const textAnswer = (root: string, value: TSchema): Answer => ({ root, value: { ...value, xml: { name: root } } });
