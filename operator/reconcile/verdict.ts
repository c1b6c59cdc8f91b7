/** What a backup check concluded, before it becomes a condition (BackupReady, WalArchiving). */
export interface BackupVerdict {
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}
