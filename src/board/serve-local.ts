import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { ConsortConfig } from "../config/consort-config.js";
import { localBoardSource } from "./local.js";
import { boardHandler } from "./server.js";

/**
 * The board of a local checkout on 127.0.0.1 (never another interface: there is no sign-in), as
 * `consort board` serves it.
 */

export interface LocalBoardOptions {
  repoPath: string;
  config: ConsortConfig;
  /** 0 for any free port. */
  port: number;
  /** The viewer's GitHub login, for "waiting for me"; null shows what waits for a person. */
  me: string | null;
  stateKey?: string;
  pollMs?: number;
  warn?: (message: string) => void;
}

export interface LocalBoard {
  url: string;
  close(): Promise<void>;
}

export async function startLocalBoard(options: LocalBoardOptions): Promise<LocalBoard> {
  const source = localBoardSource(options);
  const handle = boardHandler({
    base: "",
    source,
    signOut: false,
    viewer: () => Promise.resolve({ login: options.me }),
  });
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      options.warn?.(`request ${req.url} failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
      res.end("The board failed to answer; see the terminal.\n");
    });
  });
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(options.port, "127.0.0.1", () => done());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((done) => {
        source.close();
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
