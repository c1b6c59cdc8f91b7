/** Built-in kinds Keelson and its stand-in controllers use, with the defaults and checks that matter. */
import { appsTypes } from './builtins/apps.js';
import { coreTypes, storageAndNodeTypes } from './builtins/core.js';
import type { BuiltinType } from './builtins/define.js';
import { otherTypes } from './builtins/other.js';
import { podType } from './builtins/pods.js';

export { nameRuleOf, type BuiltinType, type ComputedColumn } from './builtins/define.js';

export const builtinTypes: BuiltinType[] = [...coreTypes, podType, ...storageAndNodeTypes, ...appsTypes, ...otherTypes];
