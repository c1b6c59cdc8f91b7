/** apps/v1 workloads: Deployment, StatefulSet, ReplicaSet, ControllerRevision. */
import { forbidden, invalidValue, required, type FieldError } from '../../errors.js';
import { formatLabelSelector, parseLabelSelector, type LabelSelectorObject } from '../../storage/selectors.js';
import { isJsonObject, jsonEqual, type JsonObject, type KubeObject } from '../../types.js';
import { computedColumn, define, obj, specOf, type BuiltinType } from './define.js';
import { defaultPodSpec, validatePodSpec } from './pods.js';

/** Workload checks shared by Deployment, StatefulSet and ReplicaSet. */
function validateWorkload(o: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec = specOf(o);
  const errors: FieldError[] = [];
  const selector = isJsonObject(spec.selector) ? (spec.selector as LabelSelectorObject) : undefined;
  if (!selector || (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)) {
    errors.push(required('spec.selector'));
  } else {
    const template = obj(spec.template);
    const labels = obj(template.metadata).labels as Record<string, string> | undefined;
    if (!parseLabelSelector(formatLabelSelector(selector))(labels)) {
      errors.push(invalidValue('spec.template.metadata.labels', labels ?? {}, '`selector` does not match template `labels`'));
    }
    if (old && !jsonEqual(obj(old.spec).selector, selector)) errors.push(invalidValue('spec.selector', selector, 'field is immutable'));
  }
  if (typeof spec.replicas === 'number' && spec.replicas < 0) errors.push(invalidValue('spec.replicas', spec.replicas, 'must be greater than or equal to 0'));
  errors.push(...validatePodSpec(obj(obj(spec.template).spec), 'spec.template.spec'));
  return errors;
}

function defaultTemplate(o: KubeObject): void {
  const template = obj(specOf(o).template);
  if (isJsonObject(template.spec)) defaultPodSpec(template.spec);
}

export const appsTypes: BuiltinType[] = [
  define({
    group: 'apps',
    version: 'v1',
    plural: 'deployments',
    kind: 'Deployment',
    shortNames: ['deploy'],
    statusSubresource: true,
    tracksGeneration: true,
    categories: ['all'],
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
    columns: [
      computedColumn((o) => `${obj(o.status).readyReplicas ?? 0}/${obj(o.spec).replicas ?? 0}`),
      computedColumn((o) => obj(o.status).updatedReplicas ?? 0, 'Up-to-date'),
      computedColumn((o) => obj(o.status).availableReplicas ?? 0, 'Available'),
    ],
    defaults: (o) => {
      const spec = specOf(o);
      spec.replicas ??= 1;
      spec.strategy ??= { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } };
      spec.revisionHistoryLimit ??= 10;
      spec.progressDeadlineSeconds ??= 600;
      defaultTemplate(o);
    },
    validate: validateWorkload,
  }),
  define({
    group: 'apps',
    version: 'v1',
    plural: 'statefulsets',
    kind: 'StatefulSet',
    shortNames: ['sts'],
    statusSubresource: true,
    tracksGeneration: true,
    categories: ['all'],
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
    columns: [computedColumn((o) => `${obj(o.status).readyReplicas ?? 0}/${obj(o.spec).replicas ?? 0}`)],
    defaults: (o) => {
      const spec = specOf(o);
      spec.replicas ??= 1;
      spec.podManagementPolicy ??= 'OrderedReady';
      spec.updateStrategy ??= { type: 'RollingUpdate', rollingUpdate: { partition: 0 } };
      spec.revisionHistoryLimit ??= 10;
      spec.persistentVolumeClaimRetentionPolicy ??= { whenDeleted: 'Retain', whenScaled: 'Retain' };
      defaultTemplate(o);
    },
    validate: (o, old) => {
      const errors = validateWorkload(o, old);
      if (old) {
        const allowed = [
          'replicas',
          'template',
          'updateStrategy',
          'persistentVolumeClaimRetentionPolicy',
          'minReadySeconds',
          'ordinals',
          'revisionHistoryLimit',
        ];
        const strip = (s: JsonObject): JsonObject => Object.fromEntries(Object.entries(s).filter(([k]) => !allowed.includes(k)));
        if (!jsonEqual(strip(specOf(o)), strip(obj(old.spec)))) {
          errors.push(
            forbidden(
              'spec',
              "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            ),
          );
        }
      }
      return errors;
    },
  }),
  define({
    group: 'apps',
    version: 'v1',
    plural: 'replicasets',
    kind: 'ReplicaSet',
    shortNames: ['rs'],
    statusSubresource: true,
    tracksGeneration: true,
    categories: ['all'],
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
    defaults: (o) => {
      specOf(o).replicas ??= 1;
      defaultTemplate(o);
    },
    validate: validateWorkload,
  }),
  define({
    group: 'apps',
    version: 'v1',
    plural: 'controllerrevisions',
    kind: 'ControllerRevision',
    validate: (o) => (o.data === undefined || o.data === null ? [required('data', 'data is mandatory')] : []),
  }),
];
