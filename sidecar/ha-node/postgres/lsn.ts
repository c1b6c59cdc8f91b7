/** PostgreSQL log positions: "16/B374D848" text <-> byte offsets as JavaScript numbers (exact below 2^53). */
export function parseLsn(text: string | null | undefined): number | undefined {
  if (!text) return undefined;
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text.trim());
  if (!match) return undefined;
  return parseInt(match[1]!, 16) * 0x1_0000_0000 + parseInt(match[2]!, 16);
}

export function formatLsn(value: number): string {
  const high = Math.floor(value / 0x1_0000_0000);
  const low = value - high * 0x1_0000_0000;
  return `${high.toString(16).toUpperCase()}/${low.toString(16).toUpperCase()}`;
}
