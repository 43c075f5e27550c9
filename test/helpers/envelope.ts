/** Results are inspected freely in tests; the assertions are the type checks. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyJson = any;

/** A v4 envelope as tests read it. */
export interface Envelope {
  success: boolean;
  errors: AnyJson[];
  messages: { code: number; message: string }[];
  result: AnyJson;
  result_info?: Record<string, AnyJson>;
}

export async function envelopeOf(response: Response): Promise<Envelope> {
  return (await response.json()) as Envelope;
}
