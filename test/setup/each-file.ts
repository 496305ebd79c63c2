import nock from "nock";
import { afterEach, beforeAll } from "vitest";

// No test reaches the network: every HTTP call must be a declared, contract-checked mock.
beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect((host) => host.startsWith("127.0.0.1") || host.startsWith("localhost"));
});

afterEach(() => {
  nock.cleanAll();
});
