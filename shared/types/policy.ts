import { z } from 'zod';
import { NETWORK_MODES, RUNTIMES } from './sandbox.js';

// The gateway's policy: what agents may run, read, write and create, and what a run may spend.
// Loaded from WARDEN_HOME/policy.yaml (or .json); the commented default is resources/policy.default.yaml.

export const POLICY_ACTIONS = ['allow', 'ask', 'deny'] as const;
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

/** deny beats ask beats allow: when several rules or commands match, the strictest wins. */
export const ACTION_RANK: Record<PolicyAction, number> = { allow: 0, ask: 1, deny: 2 };

/**
 * A command rule may also say `snapshot-then-allow`: the sandbox is snapshotted, then the command
 * runs (a snapshot that fails refuses it). Stricter than allow, looser than ask.
 */
export const COMMAND_RULE_ACTIONS = ['allow', 'snapshot-then-allow', 'ask', 'deny'] as const;
export type CommandRuleAction = (typeof COMMAND_RULE_ACTIONS)[number];
export const RULE_RANK: Record<CommandRuleAction, number> = { allow: 0, 'snapshot-then-allow': 0.5, ask: 1, deny: 2 };

const globList = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).transform((v) => (Array.isArray(v) ? v : [v]));

export const CommandRuleSchema = z
  .object({
    /** Program name(s), matched on the basename after wrappers (env, sudo, nice, sh -c …) are peeled off; globs allowed. */
    command: globList,
    /** Only when some argument, as written, matches one of these globs (e.g. "-*r*" for rm -r, -fr, -rf); `\` makes the next character plain ('/\*' is the argument /* itself). */
    args: globList.optional(),
    action: z.enum(COMMAND_RULE_ACTIONS),
    reason: z.string().max(500).optional(),
  })
  .strict();
export type CommandRule = z.output<typeof CommandRuleSchema>;

/** hidden: not there for agents; read-only: never changed by them; ask: a person approves each change, shown its diff. */
export const PATH_ACCESS = ['read-only', 'hidden', 'ask'] as const;
export const PathRuleSchema = z
  .object({
    /** A glob on the path under /workspace ("**" crosses directories), e.g. "/workspace/.git/**". */
    path: z.string().startsWith('/workspace'),
    access: z.enum(PATH_ACCESS),
  })
  .strict();
export type PathRule = z.output<typeof PathRuleSchema>;

export const BreakerSchema = z
  .object({
    /** Consecutive failed calls that open the breaker. */
    failures: z.number().int().min(1).max(1000),
    /** How long it stays open before one probe call is let through. */
    cooldownMs: z
      .number()
      .int()
      .min(0)
      .max(24 * 3600 * 1000),
  })
  .strict();

export const BudgetsSchema = z
  .object({
    /** Wall time of a run from its first call. */
    wallTimeMs: z.number().int().positive(),
    /** Tool calls a run may make (denied calls count too: a denied call is still a step). */
    maxCalls: z.number().int().positive(),
    /** Timeout given to an exec that asks for none, and the most one may ask for. */
    execTimeoutMs: z.number().int().positive(),
    maxExecTimeoutMs: z.number().int().positive(),
    /** Output (stdout+stderr) a run may receive in total; each exec is capped by what is left. */
    outputBytes: z.number().int().positive(),
    /**
     * Bytes (both ways) a run's connections may carry through the egress proxy: those made while one
     * of its execs runs in an `egress` sandbox. Past it they are cut and new ones refused; unset: no bound.
     */
    egressBytes: z.number().int().positive().optional(),
    breaker: BreakerSchema,
  })
  .strict();
export type Budgets = z.output<typeof BudgetsSchema>;

export const CreateLimitsSchema = z
  .object({
    /** Images an agent may ask for (globs); the default image is always allowed. */
    images: z.array(z.string().min(1)),
    /** Runtimes an agent may ask for by name. */
    runtimes: z.array(z.enum(RUNTIMES)),
    /** When set, every agent sandbox runs in this runtime (tier): an agent's create without a runtime gets it, any other is refused. */
    requireRuntime: z.enum(RUNTIMES).optional(),
    maxMemoryBytes: z.number().int().positive(),
    maxCpus: z.number().positive(),
    maxPids: z.number().int().positive(),
    /** Disk images are sparse files on the host: this bounds what one agent sandbox may claim (16 GiB unless set). */
    maxDiskBytes: z
      .number()
      .int()
      .positive()
      .default(16 * 1024 ** 3),
    maxTtlSeconds: z.number().int().positive(),
    /** Sandboxes one agent may have at once. */
    maxSandboxes: z.number().int().positive(),
    /** Refuse agent calls into a sandbox whose latest attestation failed (default false). */
    requireAttestation: z.boolean().optional(),
  })
  .strict()
  .refine((c) => !c.requireRuntime || c.runtimes.includes(c.requireRuntime), {
    message: 'requireRuntime must be one of runtimes',
    path: ['requireRuntime'],
  });
export type CreateLimits = z.output<typeof CreateLimitsSchema>;

/**
 * Limits on one agent across all its runs: a new run key resets none of them. Optional in a policy
 * file (older files stay valid): a missing field takes the default shown.
 */
export const AgentLimitsSchema = z
  .object({
    /** Tool calls an agent may start per minute (a bucket of this many, refilled over a minute). */
    callsPerMinute: z.number().int().positive().default(600),
    /** Execs of one agent running at once. */
    concurrentExecs: z.number().int().positive().default(8),
    /** Output (stdout+stderr) one agent may receive per hour (a bucket refilled over the hour). */
    outputBytesPerHour: z
      .number()
      .int()
      .positive()
      .default(1024 * 1024 * 1024),
    /** Runs one agent may have open at once; a call that would open one more is refused. */
    maxOpenRuns: z.number().int().positive().default(50),
    /** A run with no call for this long ends (its key then starts nothing: use a new one). */
    runIdleMs: z
      .number()
      .int()
      .positive()
      .default(30 * 60 * 1000),
  })
  .strict();
export type AgentLimitsPolicy = z.output<typeof AgentLimitsSchema>;

/** Automatic snapshots (engine/snapshot/): optional in a policy file; absent, none are taken. */
export const SnapshotPolicySchema = z
  .object({
    /**
     * Snapshot the sandbox before an agent run's first call that can change it (exec, file write,
     * mkdir, remove, move), so the run can be undone: reset to the tag on the run (`startSnapshot`).
     */
    onRunStart: z.boolean().default(false),
    /** Automatic snapshots kept per sandbox (run starts and snapshot-then-allow); older ones are removed. */
    keepAutomatic: z.number().int().min(1).max(100).default(8),
  })
  .strict();
export type SnapshotPolicy = z.output<typeof SnapshotPolicySchema>;

/** A destination name: an exact host, or `*.` and a suffix (any name below it, not the suffix itself). */
const EGRESS_HOST_PATTERN = /^(\*\.)?[a-z0-9_]([a-z0-9_.:-]{0,252})$/i;

export const EgressRuleSchema = z
  .object({
    /** Exact name (or literal address as written) or `*.example.com`; absent: any host. */
    host: z.string().regex(EGRESS_HOST_PATTERN, 'host is a name like api.example.com or *.example.com').optional(),
    /** Only these ports; absent: any port. */
    port: z
      .union([z.number().int().min(1).max(65535), z.array(z.number().int().min(1).max(65535)).min(1)])
      .transform((v) => (Array.isArray(v) ? v : [v]))
      .optional(),
    /**
     * Only when the address (the literal one, or what the name resolved to) is in this block, e.g.
     * 10.1.2.0/24. A rule with a cidr is also what names a loopback, link-local, private or host
     * address explicitly: without one, those are refused whatever the host rule says.
     */
    cidr: z
      .string()
      .regex(/^[0-9a-f.:]+\/\d{1,3}$/i, 'cidr is an address block like 10.0.0.0/8 or fd00::/8')
      .optional(),
    action: z.enum(POLICY_ACTIONS),
  })
  .strict()
  .refine((r) => r.host !== undefined || r.cidr !== undefined, { message: 'an egress rule names a host, a cidr or both' });
export type EgressRule = z.output<typeof EgressRuleSchema>;

/**
 * What an `egress` sandbox may reach through Warden's proxy. Matching rules: the strictest wins
 * (deny beats ask beats allow), as for commands; no matching rule: `default`, which is deny.
 */
export const EgressPolicySchema = z
  .object({
    default: z.enum(POLICY_ACTIONS).default('deny'),
    rules: z.array(EgressRuleSchema).default([]),
    /** Names the proxy resolves to a fixed address instead of asking DNS (curl's --resolve): internal hosts, tests. */
    resolve: z.record(z.string().regex(EGRESS_HOST_PATTERN), z.union([z.ipv4(), z.ipv6()])).default({}),
  })
  .strict();
export type EgressPolicy = z.output<typeof EgressPolicySchema>;

const PolicyBodySchema = z
  .object({
    commands: z
      .object({
        /** What happens to a command no rule matches. */
        default: z.enum(POLICY_ACTIONS),
        /** A command whose program is computed at run time ($CMD, eval, `…`) cannot be checked: what then. */
        dynamic: z.enum(POLICY_ACTIONS),
        rules: z.array(CommandRuleSchema),
      })
      .strict(),
    paths: z.array(PathRuleSchema),
    network: z.object({ allowed: z.array(z.enum(NETWORK_MODES)).min(1), default: z.enum(NETWORK_MODES) }).strict(),
    create: CreateLimitsSchema,
    /** Optional in a policy file: absent, no destination is allowed. */
    egress: EgressPolicySchema.default(EgressPolicySchema.parse({})),
    budgets: BudgetsSchema,
    approvals: z
      .object({
        /** How long an `ask` waits for a person; then it is denied. */
        timeoutMs: z
          .number()
          .int()
          .positive()
          .max(24 * 3600 * 1000),
      })
      .strict(),
    files: z
      .object({
        maxReadBytes: z.number().int().positive(),
        maxWriteBytes: z.number().int().positive(),
      })
      .strict(),
    agents: AgentLimitsSchema.default(AgentLimitsSchema.parse({})),
    snapshots: SnapshotPolicySchema.default(SnapshotPolicySchema.parse({})),
    /** "own": an agent sees and acts on only the sandboxes it created; "all": every Warden sandbox. */
    access: z.enum(['own', 'all']),
  })
  .strict();

/** Per-sandbox overrides (keyed by sandbox name glob): replace whole sections, rules are prepended. */
export const PolicyOverrideSchema = z
  .object({
    commands: PolicyBodySchema.shape.commands.partial().optional(),
    paths: z.array(PathRuleSchema).optional(),
    budgets: BudgetsSchema.partial().optional(),
    approvals: PolicyBodySchema.shape.approvals.optional(),
  })
  .strict();
export type PolicyOverride = z.output<typeof PolicyOverrideSchema>;

export const PolicySchema = PolicyBodySchema.extend({
  version: z.literal(1),
  sandboxes: z.record(z.string().min(1), PolicyOverrideSchema).optional(),
}).strict();
export type Policy = z.output<typeof PolicySchema>;
export type PolicyInput = z.input<typeof PolicySchema>;

/** Fields of a sandbox spec no agent may ever ask for; refused by policy, whatever the file says. */
export const AGENT_FORBIDDEN_CREATE_FIELDS = [
  'workspace',
  'privileged',
  'capAdd',
  'cap_add',
  'capabilities',
  'devices',
  'mounts',
  'volumes',
  'binds',
  'pid',
  'ipc',
  'uts',
  'userns',
  'netns',
  'hostNetwork',
  'securityOpt',
  'seccomp',
] as const;
