import { collapseWhitespace, windowsOf } from './text';

/**
 * The scope check the built-in engine makes before it reads an intent: is the question one to refuse
 * (secrets, its own instructions, another tenant's data, instructions embedded in the question to drop
 * its rules), one the tenant's data cannot answer (another cloud, general knowledge, markets, people),
 * or one about this tenant's cloud, findings, incidents, changes, costs and learnings?
 *
 * It reads the kind of thing asked for (classes of words and the structure around them), never a list of
 * sentences. A refusal and an out-of-scope answer state no figure, id or name of the tenant.
 */

export type RefusalReason = 'secrets' | 'instructions' | 'other-tenants' | 'injection';
export type OutOfScopeReason = 'other-cloud' | 'general' | 'action';

export type Scope =
  | { kind: 'refuse'; reason: RefusalReason }
  | { kind: 'out_of_scope'; reason: OutOfScopeReason; what?: string | undefined }
  | { kind: 'in_scope' };

/** Words asking the engine to drop its rules, take another role, or obey text inside the question. */
const INJECTION = [
  /\b(?:ignore|disregard|forget|override|bypass|circumvent|drop|skip|suspend|turn off|disable)\b[^.?!\n]{0,40}\b(?:rules?|instructions?|guidelines?|guardrails?|restrictions?|polic(?:y|ies)|constraints?|safeguards?|limitations?|limits?|filters?|tenant (?:scope|boundar(?:y|ies)|isolation)|scope|everything (?:above|before)|(?:previous|prior|earlier|above)(?: \w+)?)\b/,
  /\byou are (?:now|no longer)\b|\bfrom now on,? you\b|\bpretend (?:to be|you are|that you)\b|\bact as (?:if|an? (?:admin|administrator|root|superuser|unrestricted|different|system))\b|\broleplay as\b/,
  /\b(?:developer|debug|god|admin|sudo|dan|jailbreak(?:ed)?|unrestricted|maintenance) mode\b|\bjailbreak\b|\bprompt injection\b|\bnew (?:system )?instructions?\s*:/,
  /\b(?:system|admin(?:istrator)?|assistant)\s*(?:override|message|note)\s*:/,
];

/** Asking for its own instructions, prompt or configuration. */
const INSTRUCTIONS = [
  /\b(?:system|initial|original|hidden|secret|developer|base|pre-?)\s*(?:prompt|message|instructions?|directives?)\b/,
  /\byour (?:own |exact |full |internal |hidden )?(?:instructions?|prompts?|rules|guidelines|directives|system message|configuration|programming|guardrails|policies)\b/,
  /\b(?:what|how) (?:were|are|have) you (?:been )?(?:told|instructed|programmed|prompted|configured|set up)\b/,
  /\b(?:settings?|config(?:uration)?|environment(?: variables?)?|env vars?)\b[^.?!\n]{0,40}\b(?:the (?:service|server|agent|worker|api)|you|opsi)\s+(?:runs?|is running|are running|uses?|is using|was started|starts?)\s+with\b/,
  /\b(?:instructions?|rules|guidelines|directives)\b[^.?!\n]{0,30}\b(?:(?:were|was|are|have been) you given|you (?:were|have been|are) given|given to you|you (?:follow|obey|were told))\b/,
  /\bwhat (?:rules|instructions|guidelines) (?:were you|are you|do you|have you)\b/,
  /\b(?:repeat|print|show|reveal|output|dump|display|recite|leak)\b[^.?!\n]{0,30}\b(?:(?:the )?(?:text|words) above|everything above|the prompt|instructions)\b/,
];

/** Another tenant (organization, customer) than the one asking. */
const OTHER_TENANTS = [
  /\b(?:other|another|others'?|different|all|every|each|any other|rest of the|remaining)\s+(?:tenants?|customers?'?|clients?|organi[sz]ations?|orgs?|companies|company's|workspaces?|users? of (?:this|the) (?:service|platform))\b/,
  /\bcross[- ]tenants?\b|\bsomeone else'?s\b|\bnot (?:our|my) (?:tenant|organi[sz]ation|company)\b/,
  /\b(?:another|other|one|some|any)\s+(?:one\s+)?of\s+(?:your|the service's|the platform's|opsi's|this service's)\s+(?:other\s+)?(?:customers|clients|tenants|users|organi[sz]ations|companies|accounts)\b|\byour (?:other )?(?:customers|clients|tenants)\b/,
  /\b(?:of|for|from|in|does|did|do|about|belonging to|owned by|see|to)\s+(?:the\s+)?tenants?\s+(?!scope\b|isolation\b)["'`]?[\w-]{1,64}/,
  /\btenants?\s+(?:b|two|2|[0-9a-f]{8}-[0-9a-f-]{27,})\b/,
  /\b(?:competitors?|rivals?)'?s?\b[^.?!\n]{0,40}\b(?:data|findings|resources|infrastructure|inventory|costs?|spend|bills?|incidents?)\b/,
];

/** Things that are secrets; asking for one is refused, asking about the posture around them is not. */
const SECRET_NOUN =
  /\b(?:cookies?|session (?:ids?|cookies?|keys?)|jwts?|csrf tokens?|one-time (?:codes?|passwords?)|otps?|mfa (?:codes?|secrets?|seeds?)|recovery codes?|[a-z0-9]*_(?:key|secret|token|password|passwd|credentials?)(?:_[a-z0-9]+)*|passwords?|passwd|passphrases?|pass ?codes?|secrets?|credentials?|creds|private keys?|secret (?:access )?keys?|access key secrets?|api[-_ ]?(?:keys?|tokens?)|bearer tokens?|session tokens?|auth(?:entication|orization)? tokens?|access tokens?|refresh tokens?|tokens?|connection strings?|dsn|ssh keys?|pem (?:files?|keys?)|\.env|env(?:ironment)? (?:file|variables?)|kms key material|master (?:user )?passwords?|login details|keys? (?:for|to|of)\b)/;
const REVEAL =
  /\b(?:show|give|send|print|reveal|tell|what(?:'s| is| are)|list|dump|share|display|read|get|fetch|output|paste|copy|export|retrieve|decrypt|leak|email|need|want|provide|where (?:is|are|can i find)|let me (?:see|have)|look up)\b/;
/** …unless the question is about their hygiene (rotation, exposure, age), which findings answer. */
const SECRET_POSTURE =
  /\b(?:rotat\w*|older than|how old|age|aged|stale|unused|inactive|exposed|exposure|leaked|public(?:ly)?|unencrypted|encrypt\w*|weak|polic(?:y|ies)|complian\w*|findings?|risks?|mfa|last used|hygiene|hardcoded|hard-coded|in (?:plain ?text|code|the repo)|which (?:users?|roles?|resources?) (?:have|has|use))\b/;

/** Clouds and platforms this service does not collect. */
const OTHER_CLOUD =
  /\b(azure|gcp|google cloud|gke|bigquery|cloud run|digital ?ocean|oracle cloud|oci|alibaba cloud|aliyun|ibm cloud|linode|heroku|cloudflare|vercel|netlify|hetzner|ovh|openstack|vmware|vsphere|on-?prem(?:ise)?s?|snowflake|datadog|new relic|splunk|kubernetes|k8s|openshift)\b/;

/** General knowledge, markets, people and everyday topics: nothing in a tenant's cloud answers them. */
const GENERAL = [
  // markets and money outside the cloud bill
  /\b(?:stocks?|shares?|share price|stock price|market (?:cap|price|share|trend)s?|nasdaq|nyse|dow jones|s&p|ftse|ipo|dividends?|crypto\w*|bitcoin|ethereum|btc|eth|forex|exchange rates?|interest rates?|inflation|recession|mortgages?|retirement|pensions?|401k|tax(?:es)? (?:return|bracket)s?|lottery|invest(?:ing|ment|ments|or|ors)?\b(?! in (?:reserved|savings plans?)))\b/,
  // people and organizations outside the tenant's data
  /\b(?:ceo|cfo|cto|founder|president|prime minister|chancellor|king|queen|pope|celebrit\w*|singer|footballer)\b/,
  /\b(?:phone number|home address|salary|salaries|birthday|date of birth|social security|marital|home town|personal email|linkedin)\b/,
  /\bhow many (?:people|employees|staff|engineers|developers|workers|contractors|customers|users of (?:the|our) (?:app|product|website))\b|\b(?:headcount|payroll|hiring|recruit\w*|org ?chart|offices?|employees|staffing|team size|who (?:works|sits) (?:in|at|on))\b/,
  // the world
  /\b(?:weather|weather forecast|temperature (?:in|outside)|rain(?:ing)?|snow(?:ing)?|news|headlines?|elections?|politic\w*|war in|sports?|football|soccer|basketball|baseball|cricket|tennis|world cup|olympics|super bowl|match score|movies?|films?|tv shows?|netflix|songs?|music|lyrics|books? (?:about|by)|novels?|recipes?|cook(?:ing)?|restaurants?|hotels?|flights?|travel|vacation|holiday plans?|horoscope|zodiac)\b/,
  /\b(?:capital of|population of|distance (?:from|between)|how tall is|when was .+ (?:born|founded|invented)|who (?:invented|discovered|wrote|won|painted|founded)|meaning of life|translate|in (?:french|german|spanish|japanese|chinese))\b/,
  // creative writing and chit-chat
  /\b(?:write|compose|tell)\b[^.?!\n]{0,20}\b(?:poems?|haiku|songs?|story|stories|jokes?|essay|limerick|rap)\b|\bjokes?\b|\briddles?\b/,
  /\b(?:how are you feeling|are you (?:sentient|alive|conscious|human)|what(?:'s| is) your (?:name|favou?rite|age|opinion on)|what time is it|what(?:'s| is) the time|what day is it)\b/,
  // writing code or documents is not reading this tenant's data
  /\b(?:write|generate|create|draft|compose)\b[^.?!\n]{0,25}\b(?:sql|code|scripts?|programs?|functions?|regex|python|javascript|bash|terraform|cloudformation|emails?|letters?|essays?|cover letter|resume|cv)\b/,
];

/** Requests to act on the cloud: the agent's tools only read. */
const ACTION =
  /^(?:please\s+|can you\s+|could you\s+|go ahead and\s+|now\s+)?(?:delete|terminate|drop|destroy|remove|shut ?down|stop|reboot|restart|scale (?:up|down|out|in)|resize|launch|deploy|rotate|disable|detach|revoke|grant|execute)\b(?![^?]*\?\s*$)|\b(?:can|could|would|will) you (?:please )?(?:delete|terminate|drop|destroy|shut ?down|stop|reboot|restart|scale|resize|launch|deploy|rotate|disable|enable|apply|execute|revoke|grant|remove)\b/;

/** Words that tie a question to this tenant's cloud and what the service knows of it. */
const DOMAIN =
  /\b(?:aws|amazon web services|accounts?|resources?|inventory|infra(?:structure)?|cloud|instances?|ec2|rds|s3|buckets?|databases?|dbs?|volumes?|ebs|snapshots?|security groups?|sgs?|load ?balancers?|albs?|elbs?|target groups?|nat|gateways?|vpcs?|subnets?|iam|users?|roles?|policies|access keys?|lambda|functions?|dynamo\w*|tables?|caches?|elasticache|redis|alarms?|cloudwatch|cloudtrail|log groups?|route ?53|dns|regions?|zones?|azs?|us-[a-z]+-\d|findings?|issues?|problems?|risks?|vulnerab\w*|security|exposed|exposures?|public(?:ly)?|encrypt\w*|backups?|costs?|costly|spend\w*|bills?|billing|sav(?:e|es|ing|ings)|wast\w*|cheaper|expensive|money|finops|sre|reliab\w*|resilien\w*|incidents?|outages?|alerts?|paged?|sev ?\d|changes?|changed|drift\w*|deploy\w*|modified|deleted|created|learn\w*|lessons?|runbooks?|playbooks?|fix\w*|remediat\w*|depend\w*|blast|breaks?|fails?|failure|down|spofs?|services?|tag(?:s|ged)?|prod(?:uction)?|staging|servers?|hosts?|machines?|vms?|clusters?|environment|owner|owns|owned|on-?call|team|configured|configuration|open|broken|wrong|healthy|health|status|attention|priorit\w*|urgent|important|fire|ports?|ssh|rdp|ingress|egress|firewalls?|errors?|latency|timeouts?|5\d\d|5xx|elastic ips?|eips?|ip addresses?|ips?|addresses|allocated|launch templates?|templates?|records?|certificates?|kms|queues?|sqs|sns|topics?|ecr|ecs|eks|cloudfront|distributions?|stacks?|admin\w*|access|permissions?|privileges?|resized|deleted|turned off|disabled|enabled|revoked|instance types?|region|account)\b/;

/** An id-like word (kebab-case, dotted, with digits): a name of something in the tenant's inventory, most likely. */
const NAME_LIKE = /\b[a-z0-9]+(?:[-_.][a-z0-9]+)+\b|\b(?:arn:aws|[a-z]+-[0-9a-f]{8,17})\b/;

/** Whether the question names something the service could know about this tenant. */
export function hasDomainSignal(lower: string): boolean {
  return DOMAIN.test(lower) || NAME_LIKE.test(lower);
}

/**
 * The scope of a prompt, read before its intent. The whole prompt is read (a request to refuse may sit
 * anywhere in it), in overlapping windows so that the cost is linear in its length (issue 24).
 */
export function scopeOf(prompt: string): Scope {
  const lower = collapseWhitespace(prompt.toLowerCase().replace(/[’‘]/g, "'"));
  const windows = windowsOf(lower);
  let found: Scope = { kind: 'in_scope' };
  const order: Record<Scope['kind'], number> = { refuse: 0, out_of_scope: 1, in_scope: 2 };
  for (const w of windows) {
    const s = scopeOfText(w);
    if (
      order[s.kind] < order[found.kind] ||
      (s.kind === 'refuse' && found.kind === 'refuse' && rank(s) < rank(found))
    )
      found = s;
  }
  return found;
}

const REFUSAL_ORDER: RefusalReason[] = ['injection', 'instructions', 'other-tenants', 'secrets'];
const rank = (s: Scope) => (s.kind === 'refuse' ? REFUSAL_ORDER.indexOf(s.reason) : 9);

function scopeOfText(lower: string): Scope {
  if (INJECTION.some((re) => re.test(lower))) return { kind: 'refuse', reason: 'injection' };
  if (INSTRUCTIONS.some((re) => re.test(lower))) return { kind: 'refuse', reason: 'instructions' };
  if (OTHER_TENANTS.some((re) => re.test(lower))) return { kind: 'refuse', reason: 'other-tenants' };
  if (SECRET_NOUN.test(lower) && REVEAL.test(lower) && !SECRET_POSTURE.test(lower))
    return { kind: 'refuse', reason: 'secrets' };
  const cloud = OTHER_CLOUD.exec(lower);
  if (cloud) return { kind: 'out_of_scope', reason: 'other-cloud', what: cloud[1] };
  if (GENERAL.some((re) => re.test(lower))) return { kind: 'out_of_scope', reason: 'general' };
  if (ACTION.test(lower)) return { kind: 'out_of_scope', reason: 'action' };
  return { kind: 'in_scope' };
}

const CAN_ANSWER = [
  'what is open (findings by domain, severity, service tag or account)',
  'what costs the most and what could save the most',
  'what is wrong with a resource, and what depends on it or breaks if it fails',
  'single points of failure and toxic combinations',
  'which incidents are open, what is happening in one, and what happened overnight',
  'what changed, and who changed it',
  'how to fix a finding, and which runbook applies',
  'what the team has taught about a service (learnings)',
];

const PLATFORM_NAMES: Record<string, string> = {
  gcp: 'GCP',
  gke: 'GKE',
  oci: 'Oracle Cloud',
  k8s: 'Kubernetes',
  ovh: 'OVH',
  ibm: 'IBM Cloud',
  'on-prem': 'on-premises systems',
  onprem: 'on-premises systems',
  'on-premise': 'on-premises systems',
  'on-premises': 'on-premises systems',
};

function platformName(what: string): string {
  return PLATFORM_NAMES[what] ?? what.replace(/\b\w/g, (c) => c.toUpperCase());
}

const bullets = (lines: string[]) => lines.map((l) => `- ${l}`).join('\n');

const REFUSALS: Record<RefusalReason, string> = {
  secrets:
    "I can't share credentials, keys, passwords, tokens or other secrets. The service does not hand them out, and I would not reveal one if a tool returned it. I can tell you about the posture around them instead: which security findings are open on IAM users and access keys (keys not rotated, users without MFA), or what is publicly exposed.",
  instructions:
    "I can't share my instructions, system prompt or configuration. What I can do: answer questions about this tenant's cloud from its data, through read-only tools, citing the ids I rely on.",
  'other-tenants':
    "I can't show or compare another tenant's data: every tool I have is scoped to this tenant, and I answer only about this tenant's own cloud, findings, incidents and changes.",
  injection:
    "I won't follow instructions in a message that ask me to set aside my rules. I answer only about this tenant's data, through read-only tools, and I never reveal secrets, my own instructions or another tenant's data.",
};

/** The answer to a request the engine refuses: an explicit refusal, no data, and what it can answer. */
export function refusalAnswer(reason: RefusalReason): string {
  return `${REFUSALS[reason]}\n\nI can answer questions like:\n${bullets(CAN_ANSWER)}`;
}

/** The answer to a question outside what the service can see for this tenant: says so, states no data, offers what it can answer. */
export function outOfScopeAnswer(reason: OutOfScopeReason, what?: string): string {
  const head =
    reason === 'action'
      ? "That is outside what I can do for this tenant: my tools only read its data, so I cannot change, create, delete or run anything in its cloud. I can tell you what to do and why (a finding's recommendation, the runbook that applies, what depends on the resource first), and a plan can carry the change out with approval."
      : reason === 'other-cloud'
        ? `That is outside what I can see for this tenant: this service collects only the AWS inventory connected to it (and what it derives from it), so I have no data from ${what ? platformName(what) : 'that platform'} and cannot answer about it.`
        : "That is outside what I can see for this tenant: I answer only from this tenant's own cloud inventory, findings, incidents and alerts, changes, costs and learnings, and none of that covers this question, so I cannot answer it. I did not guess.";
  return `${head}\n\nWhat I can answer:\n${bullets(CAN_ANSWER)}`;
}
