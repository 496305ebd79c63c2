import { randomUUID } from "node:crypto";
import type { Probot } from "probot";
import { createConsortApp } from "../../src/index.js";
import type { AppServices } from "../../src/app/services.js";
import { createTestProbot, GitHubMock, mockInstallationToken, TEST_APP_ID } from "../helpers/github.js";

/** The state key every handler test seals with (a test value, not a secret). */
export const TEST_STATE_KEY = "test-state-key-0123456789abcdef0123456789";
/** Frozen time: every ISO stamp a handler writes is this one. */
export const TEST_APP_ID_FOR_SCENARIOS = TEST_APP_ID;
export const NOW = new Date("2026-03-01T12:00:00.000Z");

export interface Harness {
  probot: Probot;
  github: GitHubMock;
  services: AppServices;
  /** Deliver a webhook through Probot as GitHub would; returns the delivery id used. */
  receive(name: string, payload: Record<string, unknown>, deliveryId?: string): Promise<string>;
}

export function createHarness(overrides: Partial<AppServices> = {}): Harness {
  const github = new GitHubMock();
  const services: AppServices = {
    appId: TEST_APP_ID,
    stateKey: TEST_STATE_KEY,
    clock: () => NOW,
    openProvider: async () => {
      throw new Error("this test does not expect the database to be touched");
    },
    ...overrides,
  };
  const probot = createTestProbot();
  void probot.load(createConsortApp(services));
  return {
    probot,
    github,
    services,
    async receive(name, payload, deliveryId = randomUUID()) {
      await probot.receive({ id: deliveryId, name, payload } as Parameters<Probot["receive"]>[0]);
      return deliveryId;
    },
  };
}

export { mockInstallationToken };
