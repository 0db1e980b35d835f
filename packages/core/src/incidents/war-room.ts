import type { Auth } from '../context';
import { NotFound, PaymentRequired } from '../errors';
import { actorOf, appendTimelineEvent, timelineTransaction, type IncidentDeps } from './incidents';
import {
  findWarRoom,
  findWarRoomIdOfIncident,
  findWarRoomParticipants,
  insertWarRoom,
  insertWarRoomParticipant,
  insertWarRoomSession,
  lockIncidentHeadline,
} from './repository';

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
    const incident = await lockIncidentHeadline(tx, tenantId, incidentId);
    if (!incident) throw new NotFound('No such incident.');
    const existing = await findWarRoomIdOfIncident(tx, incidentId);
    let roomId = existing?.id;
    if (!roomId) {
      const sessionId = crypto.randomUUID();
      await insertWarRoomSession(tx, {
        id: sessionId,
        tenantId,
        createdBy: auth.user.id,
        name: `War room: ${incident.title}`.slice(0, 200),
        incidentId,
      });
      roomId = (await insertWarRoom(tx, { tenantId, incidentId, sessionId, createdBy: auth.user.id })).id;
      await appendTimelineEvent(tx, deps.timeline, tenantId, incidentId, {
        kind: 'war_room_opened',
        body: `War room opened by ${auth.user.name || auth.user.email}; its agent session is ${sessionId}.`,
        actor: actorOf(auth),
        data: { war_room_id: roomId, session_id: sessionId },
      });
    }
    await insertWarRoomParticipant(tx, roomId, auth.user.id);
    return { created: !existing, roomId };
  });
  return { created, room: await getWarRoom(deps, tenantId, roomId) };
}

async function getWarRoom(deps: IncidentDeps, tenantId: string, roomId: string) {
  const room = await findWarRoom(deps.db, tenantId, roomId);
  const participants = await findWarRoomParticipants(deps.db, roomId);
  return { ...room, participants };
}
