/**
 * Minimal OpenAPI v3: the root index and one document per group-version holding, for each kind,
 * a PATCH operation with `x-kubernetes-group-version-kind` and the `fieldValidation` parameter.
 * That is what kubectl 1.32 looks for before it trusts the server to validate fields.
 */
import { createHash } from 'node:crypto';
import type { ResourceRegistry, ResourceType } from '../schema/resources.js';

function pathPrefix(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

function documentFor(registry: ResourceRegistry, group: string, version: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  const types = registry.all().filter((t) => t.group === group && t.version === version);
  const schemas: Record<string, unknown> = {};
  for (const type of types) {
    const gvk = { group: type.group, version: type.version, kind: type.kind };
    const base = `/${pathPrefix(group, version)}${type.namespaced ? '/namespaces/{namespace}' : ''}/${type.plural}/{name}`;
    const operation = (verb: string): Record<string, unknown> => ({
      operationId: `${verb}${type.kind}`,
      'x-kubernetes-action': verb === 'patch' ? 'patch' : verb,
      'x-kubernetes-group-version-kind': gvk,
      parameters: [
        {
          name: 'fieldValidation',
          in: 'query',
          description: 'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields.',
          schema: { type: 'string', uniqueItems: true },
        },
        { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
        { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
      ],
      responses: { '200': { description: 'OK' } },
    });
    paths[base] = { patch: operation('patch'), put: operation('put') };
    // Custom resources publish their schema; built-ins stay schema-less so kubectl keeps using its
    // compiled-in patch strategies for client-side apply.
    const published = type.openApiSchema
      ? {
          ...type.openApiSchema,
          properties: {
            apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
            kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
            metadata: { type: 'object', description: 'Standard object metadata.' },
            ...((type.openApiSchema.properties as Record<string, unknown> | undefined) ?? {}),
          },
        }
      : { type: 'object' };
    schemas[schemaName(type)] = { ...published, 'x-kubernetes-group-version-kind': [gvk] };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.4' }, paths, components: { schemas } };
}

function schemaName(type: ResourceType): string {
  return `${type.group ? type.group.split('.').reverse().join('.') : 'io.k8s.api.core'}.${type.version}.${type.kind}`;
}

export class OpenApiDocuments {
  private cachedFor = -1;
  private documents = new Map<string, { body: string; hash: string }>();

  constructor(private readonly registry: ResourceRegistry) {}

  private refresh(): void {
    if (this.cachedFor === this.registry.generation) return;
    this.documents = new Map();
    for (const { group, version } of this.registry.groupVersions()) {
      const body = JSON.stringify(documentFor(this.registry, group, version));
      const hash = createHash('sha512').update(body).digest('hex').toUpperCase().slice(0, 128);
      this.documents.set(pathPrefix(group, version), { body, hash });
    }
    this.cachedFor = this.registry.generation;
  }

  root(): Record<string, unknown> {
    this.refresh();
    const paths: Record<string, unknown> = {};
    for (const [path, doc] of this.documents) paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${doc.hash}` };
    return { paths };
  }

  /** The document for "api/v1" or "apis/G/V", with its hash (used as ETag). */
  document(path: string): { body: string; hash: string } | undefined {
    this.refresh();
    return this.documents.get(path);
  }
}
