/** A plain-text reply of a mutating endpoint: Patroni's wording, our status codes. */
export interface Reply {
  code: number;
  text: string;
}

export const reply = (code: number, text: string): Reply => ({ code, text });

export type ManualAction = 'switchover' | 'failover';

export function capitalized(action: ManualAction): string {
  return action === 'switchover' ? 'Switchover' : 'Failover';
}
