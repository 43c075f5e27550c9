export { ApiClient, ApiError, type Auth, type ClientSettings, type ApiResponse, type Query } from './api-client.ts';
export { getUser, listAccounts, type AccountSummary } from './accounts.ts';
export {
  createPolicy,
  createWebhook,
  deletePolicy,
  deleteWebhook,
  getPolicy,
  listHistory,
  listPolicies,
  listWebhooks,
  updatePolicy,
  type NotificationHistoryItem,
  type NotificationPolicy,
  type NotificationPolicyInput,
  type WebhookDestination,
} from './notifications.ts';
