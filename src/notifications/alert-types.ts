/**
 * The alert types this platform can raise, with the filters each accepts. `available_alerts` renders
 * this catalogue, and policy validation refuses anything outside it (unknown types, foreign filter keys,
 * values outside a closed set).
 */
export interface FilterOption {
  key: string;
  /** Closed set of accepted values; `undefined` = free-form identifiers (checked elsewhere, e.g. pool ids). */
  values?: readonly string[];
  description: string;
}

export interface AlertType {
  type: string;
  display_name: string;
  description: string;
  product: string;
  filters: readonly FilterOption[];
}

export const HEALTH_VALUES = ['Healthy', 'Unhealthy'] as const;
export const EVENT_SOURCES = ['pool', 'origin'] as const;

export const LOAD_BALANCING_HEALTH_ALERT = 'load_balancing_health_alert';
export const LOAD_BALANCING_POOL_ENABLEMENT_ALERT = 'load_balancing_pool_enablement_alert';

export const ALERT_TYPES: readonly AlertType[] = [
  {
    type: LOAD_BALANCING_HEALTH_ALERT,
    display_name: 'Load Balancing Health Alert',
    description: 'Alert when the health of a load balancing pool or origin changes.',
    product: 'Load Balancing',
    filters: [
      { key: 'pool_id', description: 'Pools the policy covers (all pools when absent).' },
      { key: 'new_health', values: HEALTH_VALUES, description: 'Health values that trigger the alert.' },
      { key: 'event_source', values: EVENT_SOURCES, description: 'Objects watched: pools, origins or both.' },
    ],
  },
  {
    type: LOAD_BALANCING_POOL_ENABLEMENT_ALERT,
    display_name: 'Load Balancing Pool Enablement',
    description: 'Alert when a load balancing pool is enabled or disabled.',
    product: 'Load Balancing',
    filters: [
      { key: 'pool_id', description: 'Pools the policy covers (all pools when absent).' },
      {
        key: 'enabled',
        values: ['true', 'false'],
        description: 'Alert on enabling ("true"), disabling ("false") or both.',
      },
    ],
  },
];

export function findAlertType(type: string): AlertType | undefined {
  return ALERT_TYPES.find((alert) => alert.type === type);
}

/** `GET /available_alerts`: grouped by product, each filter rendered as the API's filter_options. */
export function renderAvailableAlerts(): Record<string, unknown[]> {
  const grouped: Record<string, unknown[]> = {};
  for (const alert of ALERT_TYPES) {
    (grouped[alert.product] ??= []).push({
      display_name: alert.display_name,
      type: alert.type,
      description: alert.description,
      filter_options: alert.filters.map((filter) => ({
        ComparisonOperator: '==',
        Key: filter.key,
        Optional: true,
        ...(filter.values ? { AvailableValues: filter.values.map((value) => ({ ID: value, Name: value })) } : {}),
        Description: filter.description,
      })),
    });
  }
  return grouped;
}
