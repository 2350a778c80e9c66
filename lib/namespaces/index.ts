import { commerceNamespace } from './commerce';
import { logisticsNamespace } from './logistics';
import type { Namespace } from '../namespace';
import { payNamespace } from './pay';
import { weatherNamespace } from './weather';


export type { EventTypeSpec, Namespace, NamespaceSchema, Readiness } from '../namespace';

/**
 * The namespaces a server has unless told otherwise: the one list every place that goes through them reads, in the
 * order /health, the OpenAPI tags and exports list them.
 */
export const builtInNamespaces: readonly Namespace[] = [commerceNamespace, logisticsNamespace, weatherNamespace, payNamespace];
