export { notificationMigrations } from './migrations.ts';
export type { NotificationService } from './service.ts';
export { notificationRoutes } from './routes.ts';
export { createMailer, LocalMailbox, SmtpMailer, type Mailer, type MailMessage, type StoredMail } from './mail.ts';
export type { NotificationSettings } from './settings.ts';
export { legacyMigrationStatus, type LegacyMigrationStatus } from './migration-status.ts';
export type { PoolDirectory, Policy, Webhook } from './types.ts';
export { createNotificationsSubsystem, type NotificationsDeps, type NotificationsSubsystem } from './subsystem.ts';
