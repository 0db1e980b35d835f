import type { RouteSpec } from '../http/route';
import { agentRoutes } from './agent.routes';
import { authRoutes } from './auth.routes';
import { ciRoutes } from './ci.routes';
import { consoleRoutes, mirrorForConsole } from './console.routes';
import { cliLoginRoutes } from './cli-login.routes';
import { docsRoutes } from './docs.routes';
import { graphRoutes } from './graph.routes';
import { incidentRoutes } from './incidents.routes';
import { knowledgeRoutes } from './knowledge.routes';
import { organizationRoutes } from './organization.routes';
import { pageRoutes } from './pages.routes';
import { planRoutes } from './plans.routes';
import { pulseRoutes } from './pulse.routes';
import { serviceRoutes } from './service.routes';
import { sessionRoutes } from './sessions.routes';
import { tokenRoutes } from './tokens.routes';
import { triageRoutes } from './triage.routes';

/** Operational routes are added by the app (they need its metrics). */
const apiAndPageRoutes: RouteSpec[] = [
  ...serviceRoutes,
  ...tokenRoutes,
  ...organizationRoutes,
  ...agentRoutes,
  ...sessionRoutes,
  ...pulseRoutes,
  ...planRoutes,
  ...knowledgeRoutes,
  ...ciRoutes,
  ...graphRoutes,
  ...incidentRoutes,
  ...triageRoutes,
  ...authRoutes,
  ...pageRoutes,
  ...cliLoginRoutes,
  ...docsRoutes,
];

/** Every API and page route, and the web console's (its page, assets and session twins of /api/v1 routes). */
export const routes: RouteSpec[] = [
  ...apiAndPageRoutes,
  ...consoleRoutes,
  ...mirrorForConsole(apiAndPageRoutes),
];
