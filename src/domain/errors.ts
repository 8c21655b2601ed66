// Domain code throws these; the HTTP edge maps each code to its status (SPEC §6) in one place.
export type ErrorCode =
  | 'invalid_request'
  | 'credentials_in_query'
  | 'invalid_api_key'
  | 'invalid_api_token'
  | 'invalid_credentials'
  | 'forbidden'
  | 'not_found'
  | 'payload_too_large'
  | 'rate_limited'
  | 'internal_error'
  | 'unavailable';

export const STATUS_OF: Record<ErrorCode, number> = {
  invalid_request: 400,
  credentials_in_query: 400,
  invalid_api_key: 401,
  invalid_api_token: 401,
  invalid_credentials: 401,
  forbidden: 403,
  not_found: 404,
  payload_too_large: 413,
  rate_limited: 429,
  internal_error: 500,
  unavailable: 503,
};

export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Seconds until a retry may succeed (rate_limited, unavailable). */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
  get status(): number {
    return STATUS_OF[this.code];
  }
}

export const USER_NOT_FOUND = 'User Not Found';
export const SERVICE_NOT_FOUND = 'Service Not Found';
/** Retry-After of `unavailable`: long enough for a pool to reconnect, short enough for a failover. */
export const UNAVAILABLE_RETRY_SECONDS = 5;

export const errors = {
  invalidRequest: (message: string) => new ApiError('invalid_request', message),
  userNotFound: () => new ApiError('not_found', USER_NOT_FOUND),
  serviceNotFound: () => new ApiError('not_found', SERVICE_NOT_FOUND),
  linkNotFound: () => new ApiError('not_found', 'Link Not Found'),
  invalidApiKey: () => new ApiError('invalid_api_key', 'Invalid API key'),
  invalidApiToken: (message = 'Missing or invalid api_token') => new ApiError('invalid_api_token', message),
  invalidCredentials: () => new ApiError('invalid_credentials', 'Invalid e-mail address or password'),
  forbidden: (message: string) => new ApiError('forbidden', message),
  /** The right password for an account whose address is not proven yet (sync_user). */
  addressNotConfirmed: () =>
    new ApiError(
      'forbidden',
      'Confirm your e-mail address first: follow the link we mailed to it (or ask for a new one on your account page), then connect again',
    ),
  rateLimited: (retryAfter: number) => new ApiError('rate_limited', 'Too many requests; retry later', retryAfter),
  unavailable: () => new ApiError('unavailable', 'Temporarily unavailable; retry later', UNAVAILABLE_RETRY_SECONDS),
};
