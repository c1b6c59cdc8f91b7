import { slotNameFor } from './conf.js';
import type { PostgresInstance } from './instance.js';
import { parseLsn } from './lsn.js';

/** Makes the physical slots match the other members (leader side); returns their positions for the DCS. */
export async function syncSlots(db: PostgresInstance, members: string[]): Promise<Record<string, number>> {
  const wanted = new Set(members.filter((m) => m !== db.settings.name).map(slotNameFor));
  const rows = await db.query<{ slot_name: string; active: boolean; restart_lsn: string | null }>(
    "SELECT slot_name, active, restart_lsn::text FROM pg_replication_slots WHERE slot_type = 'physical'",
  );
  const existing = new Set(rows.map((r) => r.slot_name));
  for (const name of wanted) {
    if (!existing.has(name)) await db.query('SELECT pg_create_physical_replication_slot($1, true)', [name]);
  }
  for (const row of rows) {
    if (!wanted.has(row.slot_name) && !row.active) await db.query('SELECT pg_drop_replication_slot($1)', [row.slot_name]);
  }
  const positions: Record<string, number> = {};
  for (const row of rows) {
    const position = wanted.has(row.slot_name) && row.restart_lsn ? parseLsn(row.restart_lsn) : undefined;
    if (position !== undefined) positions[row.slot_name] = position;
  }
  return positions;
}

/** Drops every inactive physical slot (a freshly promoted replica may carry copies from its clone). */
export async function dropInactiveSlots(db: PostgresInstance): Promise<void> {
  await db.query("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_type = 'physical' AND NOT active");
}
