import { z } from "zod";

/**
 * The webhook payloads Consort acts on, parsed once at the edge. Only the fields the handlers
 * read are named; a payload missing one of them is refused (the delivery fails) rather than
 * half-handled.
 */

const Login = z.string().min(1);
const Sha = z.string().regex(/^[0-9a-f]{40}$/, "a full commit sha");
const User = z.object({ login: Login, id: z.number().int(), type: z.string().optional() });

export const Repository = z.object({
  id: z.number().int(),
  name: z.string().min(1),
  full_name: z.string().min(1),
  owner: z.object({ login: Login }),
  default_branch: z.string().min(1),
});
export type Repository = z.infer<typeof Repository>;

const Installation = z.object({ id: z.number().int() });

const base = { repository: Repository, installation: Installation, sender: User };

/** `create` and `delete` carry the same fields: the ref and whether it is a branch or a tag. */
const RefPayload = z.object({
  ...base,
  ref: z.string().min(1),
  ref_type: z.enum(["branch", "tag"]),
});

export const CreatePayload = RefPayload;
export type CreatePayload = z.infer<typeof CreatePayload>;

export const DeletePayload = RefPayload;
export type DeletePayload = z.infer<typeof DeletePayload>;

const GitUser = z.object({
  name: z.string(),
  email: z.string().nullable().optional(),
  username: z.string().optional(),
});

const PushCommit = z.object({
  id: Sha,
  message: z.string(),
  timestamp: z.string(),
  author: GitUser,
  added: z.array(z.string()).default([]),
  removed: z.array(z.string()).default([]),
  modified: z.array(z.string()).default([]),
});
type PushCommit = z.infer<typeof PushCommit>;

export const PushPayload = z.object({
  ...base,
  ref: z.string().min(1),
  before: z.string(),
  after: z.string(),
  created: z.boolean(),
  deleted: z.boolean(),
  forced: z.boolean(),
  commits: z.array(PushCommit),
  /** `distinct`: no branch held the head before this push (an experiment writes its checks only on a head of its own). */
  head_commit: z
    .object({ distinct: z.boolean().default(false) })
    .nullable()
    .default(null),
});
export type PushPayload = z.infer<typeof PushPayload>;

const PullRequest = z.object({
  number: z.number().int(),
  html_url: z.string(),
  state: z.string(),
  merged: z.boolean().nullable().optional(),
  merge_commit_sha: z.string().nullable().optional(),
  user: User,
  head: z.object({ ref: z.string().min(1), sha: Sha, repo: z.object({ id: z.number().int() }).nullable() }),
  base: z.object({ ref: z.string().min(1), sha: Sha }),
});
type PullRequest = z.infer<typeof PullRequest>;

export const PullRequestPayload = z.object({
  ...base,
  action: z.string(),
  number: z.number().int(),
  pull_request: PullRequest,
});
export type PullRequestPayload = z.infer<typeof PullRequestPayload>;

export const ReviewPayload = z.object({
  ...base,
  action: z.enum(["submitted", "dismissed", "edited"]),
  review: z.object({
    id: z.number().int().positive(),
    user: User,
    state: z.string(),
    commit_id: Sha,
    submitted_at: z.string().nullable(),
  }),
  pull_request: PullRequest.omit({ merged: true, merge_commit_sha: true }),
});
export type ReviewPayload = z.infer<typeof ReviewPayload>;

/** What a check run and a check suite both say: which one, on which head, made by which app (a handler acts on its own app's only). */
const check = {
  id: z.number().int(),
  head_sha: Sha,
  app: z.object({ id: z.number().int() }).nullable().optional(),
};

export const CheckRunPayload = z.object({
  ...base,
  action: z.string(),
  check_run: z.object({
    ...check,
    name: z.string(),
    external_id: z.string().nullable().optional(),
    check_suite: z.object({ head_branch: z.string().nullable() }).optional(),
  }),
  requested_action: z.object({ identifier: z.string() }).nullable().optional(),
});
export type CheckRunPayload = z.infer<typeof CheckRunPayload>;

/** `check_suite.rerequested`: "Re-run all checks" on the suite of an app's checks for one head. */
export const CheckSuitePayload = z.object({
  ...base,
  action: z.string(),
  check_suite: z.object({ ...check, head_branch: z.string().nullable() }),
});
export type CheckSuitePayload = z.infer<typeof CheckSuitePayload>;

export const WorkflowRunPayload = z.object({
  ...base,
  action: z.string(),
  workflow: z.object({ path: z.string() }).nullable().optional(),
  workflow_run: z.object({
    id: z.number().int().positive(),
    path: z.string().optional(),
    event: z.string(),
    status: z.string().nullable(),
    conclusion: z.string().nullable(),
    head_branch: z.string().nullable(),
    head_sha: Sha,
    html_url: z.string(),
    display_title: z.string().nullable().optional(),
    head_repository: z.object({ id: z.number().int() }).nullable().optional(),
    // Who started the run and this attempt of it: a run someone borrowed a dispatch id for is not the app's.
    actor: User.nullable(),
    triggering_actor: User.nullable().optional(),
  }),
});
export type WorkflowRunPayload = z.infer<typeof WorkflowRunPayload>;

const InstalledRepository = z.object({ name: z.string().min(1), full_name: z.string().min(1) });

export const InstallationPayload = z.object({
  action: z.string(),
  installation: z.object({ id: z.number().int(), account: z.object({ login: Login }).nullable() }),
  repositories: z.array(InstalledRepository).optional(),
  sender: User,
});
export type InstallationPayload = z.infer<typeof InstallationPayload>;

export const InstallationRepositoriesPayload = z.object({
  action: z.string(),
  installation: z.object({ id: z.number().int() }),
  repositories_added: z.array(InstalledRepository),
  sender: User,
});
export type InstallationRepositoriesPayload = z.infer<typeof InstallationRepositoriesPayload>;

/** `merge_group`: a merge queue asks for checks on a group it built, or destroys it (merged, dequeued, invalidated). */
export const MergeGroupPayload = z.object({
  ...base,
  action: z.string(),
  reason: z.string().optional(),
  merge_group: z.object({
    head_sha: Sha,
    head_ref: z.string().min(1),
    base_ref: z.string().min(1),
  }),
});
export type MergeGroupPayload = z.infer<typeof MergeGroupPayload>;
