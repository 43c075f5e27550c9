import type { ErrorDetail } from '../shared/errors.ts';

/** `result_info` of page-numbered lists (and cursor lists, which add `cursor`). */
export interface ResultInfo {
  page?: number;
  per_page?: number;
  count?: number;
  total_count?: number;
  total_pages?: number;
  cursor?: string;
  [key: string]: unknown;
}

export interface Message {
  code: number;
  message: string;
}

export interface SuccessEnvelope<T> {
  success: true;
  errors: [];
  messages: Message[];
  result: T;
  result_info?: ResultInfo;
}

export interface FailureEnvelope {
  success: false;
  errors: ErrorDetail[];
  messages: Message[];
  result: null;
}

export function successBody<T>(result: T, resultInfo?: ResultInfo, messages: Message[] = []): SuccessEnvelope<T> {
  const body: SuccessEnvelope<T> = { success: true, errors: [], messages, result };
  if (resultInfo) body.result_info = resultInfo;
  return body;
}

export function failureBody(errors: ErrorDetail[], messages: Message[] = []): FailureEnvelope {
  return { success: false, errors, messages, result: null };
}
