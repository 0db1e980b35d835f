import type { Auth } from '../context';
import { NotFound, PaymentRequired } from '../errors';
import { actorOf, appendTimelineEvent, timelineTransaction, type IncidentDeps } from './incidents';

/** Tiers that have war rooms (decisions: team or higher). */
const WAR_ROOM_TIERS = new Set(['team', 'enterprise']);

/**
 * Opens the incident's war room, or answers the one it has: an agent session bound to the incident
 * (its turns see the incident, its alerts and its timeline), with the caller among the participants.
 * The `war_room_opened` event is written once, by the call that opened it.
 */
export async function openWarRoom(deps: IncidentDeps, auth: Auth, incidentId: string) {
  if (!WAR_ROOM_TIERS.has(auth.tenant.tier))
    throw new PaymentRequired('war_room', 'War rooms need the team tier or higher.');
  const tenantId = auth.tenant.id;
  const { created, roomId } = await timelineTransaction(deps.db, async (tx) => {
    const incident = await tx
      .selectFrom('incidents')
      .select(['id', 'title'])
      .where('tenant_id', '=', tenantId)
      .where('id', '=', incidentId)
      .forUpdate()
      .executeTakeFirst();
    if (!incident) throw new NotFound('No such incident.');
    const existing = await tx
      .selectFrom('war_rooms')
      .select('id')
      .where('incident_id', '=', incidentId)
      .executeTakeFirst();
    let roomId = existing?.id;
    if (!roomId) {
      const sessionId = crypto.randomUUID();
      await tx
        .insertInto('agent_sessions')
        .values({
          id: sessionId,
          tenant_id: tenantId,
          created_by: auth.user.id,
          name: `War room: ${incident.title}`.slice(0, 200),
          incident_id: incidentId,
        })
        .execute();
      roomId = (
        await tx
          .insertInto('war_rooms')
          .values({
            tenant_id: tenantId,
            incident_id: incidentId,
            session_id: sessionId,
            created_by: auth.user.id,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
      await appendTimelineEvent(tx, deps.timeline, tenantId, incidentId, {
        kind: 'war_room_opened',
        body: `War room opened by ${auth.user.name || auth.user.email}; its agent session is ${sessionId}.`,
        actor: actorOf(auth),
        data: { war_room_id: roomId, session_id: sessionId },
      });
    }
    await tx
      .insertInto('war_room_participants')
      .values({ room_id: roomId, user_id: auth.user.id })
      .onConflict((oc) => oc.columns(['room_id', 'user_id']).doNothing())
      .execute();
    return { created: !existing, roomId };
  });
  return { created, room: await getWarRoom(deps, tenantId, roomId) };
}

async function getWarRoom(deps: IncidentDeps, tenantId: string, roomId: string) {
  const room = await deps.db
    .selectFrom('war_rooms')
    .select(['id', 'incident_id', 'session_id', 'created_at'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', roomId)
    .executeTakeFirstOrThrow();
  const participants = await deps.db
    .selectFrom('war_room_participants as p')
    .innerJoin('users as u', 'u.id', 'p.user_id')
    .select(['u.id as user_id', 'u.name'])
    .where('p.room_id', '=', roomId)
    .orderBy('p.joined_at')
    .orderBy('u.id')
    .execute();
  return { ...room, participants };
}
