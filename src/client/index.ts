export { ApiClient, ApiError, type Auth, type ClientSettings, type ApiResponse, type Query } from './api-client.ts';
export { getUser, listAccounts, type AccountSummary } from './accounts.ts';
