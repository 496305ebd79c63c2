import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/**
 * A small emulation of the Lakebase REST API (shared/reference/lakebase-api.md) for benchmarks:
 * one project `shop` with root `production`; creating a branch or an endpoint answers an Operation
 * that is done `operationMs` later (real time), polled by its opaque name; the done operation's
 * `response` is the Branch (READY) or the Endpoint (with its host).
 */
export interface LakebaseEmulator {
  origin: string;
  operationMs: number;
  close(): Promise<void>;
}

const P = "projects/shop";

export async function startLakebaseEmulator(operationMs: number): Promise<LakebaseEmulator> {
  const branches = new Map<string, unknown>();
  const operations = new Map<string, { due: number; response: unknown }>();
  let n = 0;
  const branchBody = (id: string, source: string, state: string) => ({
    name: `${P}/branches/${id}`,
    uid: `br-${id}`,
    parent: P,
    create_time: new Date().toISOString(),
    spec: { source_branch: source, no_expiry: true },
    status: { current_state: state, source_branch: source },
  });
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const operation = (response: unknown, onDone: () => void) => {
    const name = `${P}/operations/op-${++n}`;
    operations.set(name, { due: Date.now() + emulator.operationMs, response });
    setTimeout(onDone, emulator.operationMs);
    return { name, done: false };
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const path = url.pathname.replace(/^\/api\/2\.0\/postgres\//, "");
    let text = "";
    for await (const chunk of req) text += String(chunk);
    const body = text ? (JSON.parse(text) as { spec?: { source_branch?: string } }) : {};
    const notFound = () => send(res, 404, { error_code: "NOT_FOUND", message: "branch id not found", details: [] });
    if (req.method === "GET" && path === P)
      return send(res, 200, { name: P, status: { default_branch: `${P}/branches/production` } });
    if (req.method === "GET" && operations.has(path)) {
      const op = operations.get(path)!;
      return send(
        res,
        200,
        Date.now() >= op.due ? { name: path, done: true, response: op.response } : { name: path, done: false },
      );
    }
    const endpointCreate = /^projects\/shop\/branches\/([^/]+)\/endpoints$/.exec(path);
    if (req.method === "POST" && endpointCreate) {
      const id = endpointCreate[1]!;
      const endpoint = {
        name: `${P}/branches/${id}/endpoints/primary`,
        status: { current_state: "ACTIVE", hosts: { host: `ep-${id}.example.test` } },
      };
      return send(
        res,
        200,
        operation(endpoint, () => {}),
      );
    }
    const branchPath = /^projects\/shop\/branches\/([^/]+)$/.exec(path);
    if (req.method === "GET" && branchPath) {
      const id = branchPath[1]!;
      if (id === "production") return send(res, 200, branchBody("production", "", "READY"));
      return branches.has(id) ? send(res, 200, branches.get(id)) : notFound();
    }
    if (req.method === "DELETE" && branchPath) {
      branches.delete(branchPath[1]!);
      return send(res, 200, { name: `${P}/operations/del-${++n}`, done: true, response: {} });
    }
    if (req.method === "POST" && path === `${P}/branches`) {
      const id = url.searchParams.get("branch_id")!;
      const source = body.spec?.source_branch ?? `${P}/branches/production`;
      branches.set(id, branchBody(id, source, "INIT"));
      return send(
        res,
        200,
        operation(branchBody(id, source, "READY"), () => branches.set(id, branchBody(id, source, "READY"))),
      );
    }
    return send(res, 400, { error_code: "BAD_REQUEST", message: `not emulated: ${req.method} ${path}`, details: [] });
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) =>
      send(res, 500, { error_code: "INTERNAL_ERROR", message: String(error) }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  const emulator: LakebaseEmulator = {
    origin: `http://127.0.0.1:${address.port}`,
    operationMs,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return emulator;
}
