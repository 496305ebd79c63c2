import { createRequire } from "node:module";
import { Ajv, type ValidateFunction } from "ajv";

/**
 * GitHub's own REST description (@octokit/openapi), indexed so a mocked request can be checked
 * against the operation it claims to be: the route must exist, path and query parameters must
 * have the documented types, required ones must be present, and the JSON body must match.
 */
const require = createRequire(import.meta.url);

interface Parameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  schema?: Record<string, unknown>;
  $ref?: string;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema: unknown }> };
  responses: Record<string, unknown>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { parameters: Record<string, Parameter> };
}

export interface MatchedOperation {
  operationId: string;
  template: string;
  method: string;
  pathParams: Record<string, string>;
}

interface Route {
  template: string;
  regex: RegExp;
  names: string[];
  literalLength: number;
}

let cache: { doc: OpenApiDocument; routes: Route[]; ajv: Ajv; validators: Map<string, ValidateFunction> } | undefined;

function load() {
  if (cache) return cache;
  const doc = require("@octokit/openapi/generated/api.github.com.json") as OpenApiDocument;
  const routes: Route[] = Object.keys(doc.paths).map((template) => {
    const names: string[] = [];
    const pattern = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{([^}]+)\}/g, (_m, name: string) => {
      names.push(name);
      // {ref} in git refs and {path} in contents may contain slashes.
      return name === "path" || name === "ref" ? "(.+)" : "([^/]+)";
    });
    return {
      template,
      regex: new RegExp(`^${pattern}$`),
      names,
      literalLength: template.replace(/\{[^}]+\}/g, "").length,
    };
  });
  // Prefer the most specific template: more literal characters win (`/git/refs/heads` before `{ref}`).
  routes.sort((a, b) => b.literalLength - a.literalLength);
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(doc as unknown as object, "gh");
  cache = { doc, routes, ajv, validators: new Map() };
  return cache;
}

function pointer(...segments: string[]): string {
  return segments.map((s) => s.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");
}

function validator(ref: string): ValidateFunction {
  const { ajv, validators } = load();
  let fn = validators.get(ref);
  if (!fn) {
    fn = ajv.compile({ $ref: `gh#/${ref}` });
    validators.set(ref, fn);
  }
  return fn;
}

function describeErrors(fn: ValidateFunction): string {
  return (fn.errors ?? [])
    .slice(0, 5)
    .map(
      (e) =>
        `${e.instancePath || "(root)"} ${e.message ?? ""}${e.params && "additionalProperty" in e.params ? ` (${String(e.params.additionalProperty)})` : ""}`,
    )
    .join("; ");
}

/** Find the documented operation for a concrete method and path, or undefined. */
function findOperation(method: string, path: string): MatchedOperation | undefined {
  const { doc, routes } = load();
  const lower = method.toLowerCase();
  for (const route of routes) {
    const match = route.regex.exec(path);
    if (!match) continue;
    const operation = doc.paths[route.template]?.[lower];
    if (!operation) continue;
    const pathParams: Record<string, string> = {};
    route.names.forEach((name, i) => (pathParams[name] = decodeURIComponent(match[i + 1] ?? "")));
    return { operationId: operation.operationId, template: route.template, method: lower, pathParams };
  }
  return undefined;
}

function resolveParameter(param: Parameter): Parameter {
  if (!param.$ref) return param;
  const name = param.$ref.replace("#/components/parameters/", "");
  const resolved = load().doc.components.parameters[name];
  if (!resolved) throw new Error(`GitHub description has no parameter ${param.$ref}`);
  return resolved;
}

function checkScalar(value: string, schema: Record<string, unknown> | undefined, ajvRef: string): string | undefined {
  if (!schema) return undefined;
  const type = schema.type;
  let candidate: unknown = value;
  if (type === "integer" || type === "number") {
    if (!/^-?\d+(\.\d+)?$/.test(value)) return `expected ${String(type)}, got "${value}"`;
    candidate = Number(value);
  } else if (type === "boolean") {
    if (value !== "true" && value !== "false") return `expected boolean, got "${value}"`;
    candidate = value === "true";
  } else if (type === "array") {
    candidate = value.split(",");
  }
  const fn = validator(ajvRef);
  return fn(candidate) ? undefined : describeErrors(fn);
}

/**
 * Check one request against GitHub's REST description. Returns every violation found; an empty
 * list means GitHub documents this request with these parameters and this body.
 */
export function checkRequest(
  method: string,
  url: string,
  body: unknown,
): { operation?: MatchedOperation; violations: string[] } {
  const parsed = new URL(url, "https://api.github.com");
  const label = `${method.toUpperCase()} ${parsed.pathname}`;
  const operation = findOperation(method, parsed.pathname);
  if (!operation) return { violations: [`${label}: no such endpoint in GitHub's REST description`] };
  const { doc } = load();
  const op = doc.paths[operation.template]![operation.method]!;
  const violations: string[] = [];
  const params = (op.parameters ?? []).map((p, i) => ({ p: resolveParameter(p), i }));
  for (const { p, i } of params) {
    const schemaRef = op.parameters![i]!.$ref
      ? `components/parameters/${pointer(op.parameters![i]!.$ref!.replace("#/components/parameters/", ""))}/schema`
      : `paths/${pointer(operation.template)}/${operation.method}/parameters/${i}/schema`;
    if (p.in === "path") {
      const value = operation.pathParams[p.name];
      if (value === undefined) continue;
      const problem = checkScalar(value, p.schema, schemaRef);
      if (problem) violations.push(`${label}: path parameter ${p.name}: ${problem}`);
    } else if (p.in === "query") {
      const value = parsed.searchParams.get(p.name);
      if (value === null) {
        if (p.required) violations.push(`${label}: required query parameter ${p.name} is missing`);
        continue;
      }
      const problem = checkScalar(value, p.schema, schemaRef);
      if (problem) violations.push(`${label}: query parameter ${p.name}: ${problem}`);
    }
  }
  const known = new Set(params.filter(({ p }) => p.in === "query").map(({ p }) => p.name));
  for (const name of parsed.searchParams.keys()) {
    if (!known.has(name))
      violations.push(`${label}: query parameter ${name} is not documented for ${operation.operationId}`);
  }
  const content = op.requestBody?.content;
  const jsonSchema = content?.["application/json"];
  const hasBody = body !== undefined && body !== "" && body !== null;
  if (jsonSchema) {
    if (!hasBody) {
      if (op.requestBody?.required) violations.push(`${label}: ${operation.operationId} requires a JSON body`);
    } else {
      const fn = validator(
        `paths/${pointer(operation.template)}/${operation.method}/requestBody/content/application~1json/schema`,
      );
      if (!fn(body)) violations.push(`${label}: body does not match ${operation.operationId}: ${describeErrors(fn)}`);
    }
  } else if (hasBody && !content) {
    violations.push(`${label}: ${operation.operationId} takes no request body`);
  }
  return { operation, violations };
}

/** The response status codes GitHub documents for an operation. */
export function documentedStatuses(operation: MatchedOperation): string[] {
  const op = load().doc.paths[operation.template]![operation.method]!;
  return Object.keys(op.responses);
}

/** A commit of a push, as a compare answer lists it. */
interface ComparedCommit {
  sha: string;
  author: string | null;
  message: string;
  /** Its tree, where the caller's double knows it (the app reads trees from the tree API, not from here). */
  tree?: string;
}

/**
 * GitHub's answer to `GET /repos/{owner}/{repo}/compare/{base}...{head}` for `commits` pushed onto
 * `base`, each the previous one's child, and the `files` they changed: the fields src/push/read.ts reads. One
 * answer for the handler scenarios' mocks and the bench's fake GitHub.
 */
export function compareAnswer(
  base: { sha: string; tree: string },
  commits: readonly ComparedCommit[],
  {
    status = commits.length === 0 ? "identical" : "ahead",
    files = [],
  }: { status?: string; files?: ReadonlyArray<{ filename: string; status: string; sha: string; patch?: string }> } = {},
) {
  return {
    status,
    ahead_by: commits.length,
    behind_by: 0,
    total_commits: commits.length,
    base_commit: { sha: base.sha, commit: { tree: { sha: base.tree } } },
    merge_base_commit: { sha: base.sha },
    commits: commits.map((c, i) => ({
      sha: c.sha,
      parents: [{ sha: i === 0 ? base.sha : commits[i - 1]!.sha }],
      author: c.author === null ? null : { login: c.author },
      commit: { message: c.message, ...(c.tree === undefined ? {} : { tree: { sha: c.tree } }) },
    })),
    files,
  };
}
