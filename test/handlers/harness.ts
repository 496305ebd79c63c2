import { randomUUID } from "node:crypto";
import type { Probot } from "probot";
import { createConsortApp } from "../../src/index.js";
import type { AppServices } from "../../src/app/services.js";
import { createTestProbot, GitHubMock, mockInstallationToken, TEST_APP_ID } from "../helpers/github.js";
import { FakeStateBranch, TEST_STATE_KEY } from "./fake-repo.js";
import { NOW, newBranch } from "./scenario.js";

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

/**
 * A handler test's repository: the app behind Probot (`h`), the `consort/state` branch its GitHub
 * double serves (`state`, empty until seeded), and a fresh track branch name. Each test makes its
 * own in `beforeEach` and disposes of `h.github` in `afterEach`.
 */
export function trackRepo(overrides: Partial<AppServices> = {}): {
  h: Harness;
  state: FakeStateBranch;
  branch: string;
} {
  const h = createHarness(overrides);
  return { h, state: new FakeStateBranch(h.github), branch: newBranch() };
}

export { mockInstallationToken };
