import { z } from 'zod';
import { Timestamp } from './common';

export const Role = z.enum(['owner', 'admin', 'member', 'viewer']);
export const Tier = z.enum(['free', 'team', 'enterprise']);
export const TokenScope = z.enum(['read', 'read_write']);

export const UserView = z
  .object({ id: z.string(), email: z.string(), name: z.string(), role: Role })
  .meta({ id: 'User' });
export const TenantView = z
  .object({ id: z.string(), slug: z.string(), name: z.string(), tier: Tier })
  .meta({ id: 'Tenant' });

export const LoginBody = z
  .object({ email: z.string().trim().min(3).max(320), password: z.string().min(1).max(1000) })
  .meta({ id: 'LoginBody' });

export const SessionResponse = z
  .object({ user: UserView, tenant: TenantView, csrf_token: z.string() })
  .meta({ id: 'BrowserSession' });

export const MeResponse = z
  .object({
    user: UserView,
    tenant: TenantView,
    token: z.object({ id: z.string(), scope: TokenScope, expires_at: Timestamp.nullable() }),
  })
  .meta({ id: 'Me' });

export const CreateTokenBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    scope: TokenScope,
    expires_in_days: z.int().min(1).max(365).optional(),
  })
  .meta({ id: 'CreateTokenBody' });
export type CreateTokenBody = z.infer<typeof CreateTokenBody>;

export const TokenMetadata = z
  .object({
    id: z.string(),
    name: z.string(),
    scope: TokenScope,
    token_hint: z.string(),
    created_at: Timestamp,
    expires_at: Timestamp.nullable(),
    last_used_at: Timestamp.nullable(),
    revoked_at: Timestamp.nullable(),
  })
  .meta({ id: 'TokenMetadata' });

export const TokenCreated = z
  .object({
    id: z.string(),
    name: z.string(),
    scope: TokenScope,
    token: z.string().describe('The secret: shown this once, never again.'),
    token_hint: z.string(),
    created_at: Timestamp,
    expires_at: Timestamp.nullable(),
  })
  .meta({ id: 'TokenCreated' });

export const TokenList = z.object({ tokens: z.array(TokenMetadata) }).meta({ id: 'TokenList' });

export const TeamResponse = z
  .object({
    members: z.array(
      z.object({ id: z.string(), email: z.string(), name: z.string(), role: Role, created_at: Timestamp }),
    ),
  })
  .meta({ id: 'Team' });

export const AuditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

export const AuditEntryView = z
  .object({
    id: z.string(),
    seq: z.number().int(),
    at: Timestamp,
    actor: z.object({
      type: z.enum(['user', 'operator', 'system']),
      id: z.string().nullable(),
      email: z.string().nullable().optional(),
      token_id: z.string().nullable().optional(),
    }),
    action: z.string(),
    target_type: z.string(),
    target_id: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
    prev_hash: z.string(),
    hash: z.string(),
  })
  .meta({ id: 'AuditEntry' });

export const AuditList = z.object({ entries: z.array(AuditEntryView) }).meta({ id: 'AuditList' });

export const AuditVerifyResponse = z
  .object({ valid: z.boolean(), checked: z.number().int(), first_invalid_id: z.string().nullable() })
  .meta({ id: 'AuditVerification' });
