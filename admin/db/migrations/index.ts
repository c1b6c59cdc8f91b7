import type { Migration } from '../migrate.js';
import { initialSchema } from './0001-initial-schema.js';
import { userCenterMenu } from './0002-user-center-menu.js';

/** Every schema migration in order. Append new ones; never edit one that has shipped. */
export const adminMigrations: readonly Migration[] = [initialSchema, userCenterMenu];
