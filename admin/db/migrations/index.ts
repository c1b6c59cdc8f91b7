import type { Migration } from '../migrate.js';
import { initialSchema } from './0001-initial-schema.js';

/** Every schema migration in order. Append new ones; never edit one that has shipped. */
export const adminMigrations: readonly Migration[] = [initialSchema];
