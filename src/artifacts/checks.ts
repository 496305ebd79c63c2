import picomatch from "picomatch";
import type { z } from "zod";
import { Architecture } from "./architecture.js";
import { DbDesign } from "./db-design.js";
import { storyOfAc } from "../contracts/ids.js";
import { DESIGN_STEPS } from "../contracts/stages.js";
import { ARTIFACT_PATHS } from "./paths.js";
import type { Spec } from "./spec.js";
import { TestList } from "../contracts/test-list.js";
import { Ux } from "./ux.js";

/**
 * The cross-file rules of the design artifacts, artifact by artifact, as far as a checkpoint goes:
 * unique ids, no dangling reference, every AC tested, every persistence invariant realised by the
 * db design and proven by a test. validate.ts parses the files and runs them in the lane's order.
 */

/** How far the design lane has come: later checkpoints require and cross-check more files. */
export const CHECKPOINTS = [...DESIGN_STEPS, "design", "test-list"] as const;
export type Checkpoint = (typeof CHECKPOINTS)[number];

export interface ParsedArtifacts {
  spec?: Spec;
  architecture?: Architecture;
  dbDesign?: DbDesign;
  ux?: Ux;
  testList?: TestList;
}

export interface ValidateOptions {
  /** The configured test globs: every listed test file must match one. */
  testGlobs?: string[];
  /**
   * The tables (and their columns) of the parent database's schema, when the caller can read it.
   * A foreign key may reference one of them without db-design.json describing it; without them
   * (the machine sees no database) such a reference is left to the migration on the real branch.
   */
  existingTables?: ReadonlyMap<string, ReadonlySet<string>>;
}

const at = (checkpoint: Checkpoint, from: Checkpoint) => CHECKPOINTS.indexOf(checkpoint) >= CHECKPOINTS.indexOf(from);

function duplicates<T>(items: T[], key: (item: T) => string): Array<{ index: number; first: number; key: string }> {
  const seen = new Map<string, number>();
  const out: Array<{ index: number; first: number; key: string }> = [];
  items.forEach((item, index) => {
    const k = key(item);
    const first = seen.get(k);
    if (first !== undefined) out.push({ index, first, key: k });
    else seen.set(k, index);
  });
  return out;
}

/** What every artifact's checks share: the texts, how far the lane has come, and where issues go. */
export interface Checking {
  files: Record<string, string | undefined>;
  checkpoint: Checkpoint;
  options: ValidateOptions;
  artifacts: ParsedArtifacts;
  add: (file: string, path: Array<string | number>, message: string, fix: string) => void;
  take: <K extends keyof ParsedArtifacts>(
    key: K,
    schema: z.ZodType<NonNullable<ParsedArtifacts[K]>>,
  ) => ParsedArtifacts[K];
  /** The spec when it parsed, and the ids it declares (empty when it did not). */
  spec: Spec | undefined;
  stories: Set<string>;
  acs: Set<string>;
  nfrs: Set<string>;
}

/** The spec: unique story, AC and NFR ids, ACs under their story, NFRs naming real stories. */
export function checkSpec(c: Checking, spec: Spec): void {
  const { checkpoint, add, stories } = c;
  const S = ARTIFACT_PATHS.spec;
  const value = spec;
  for (const d of duplicates(value.stories, (s) => s.id))
    add(S, ["stories", d.index, "id"], `story id ${d.key} is used twice`, `give story ${d.index + 1} its own id`);
  value.stories.forEach((story, si) => {
    story.acceptanceCriteria.forEach((ac, ai) => {
      if (storyOfAc(ac.id) !== story.id) {
        add(
          S,
          ["stories", si, "acceptanceCriteria", ai, "id"],
          `${ac.id} sits under story ${story.id}`,
          `number it ${story.id}-AC${ai + 1} or move it to ${storyOfAc(ac.id)}`,
        );
      }
    });
  });
  const allAcs = value.stories.flatMap((s, si) => s.acceptanceCriteria.map((ac, ai) => ({ ac, si, ai })));
  for (const d of duplicates(allAcs, (x) => x.ac.id)) {
    const { si, ai } = allAcs[d.index]!;
    add(
      S,
      ["stories", si, "acceptanceCriteria", ai, "id"],
      `acceptance criterion ${d.key} is used twice`,
      "give each acceptance criterion its own id",
    );
  }
  if (at(checkpoint, "spec") && value.nfrs === undefined) {
    add(S, [], "the non-functional requirements are missing", "add `nfrs` (an empty list says the feature has none)");
  }
  const nfrList = value.nfrs ?? [];
  for (const d of duplicates(nfrList, (n) => n.id))
    add(S, ["nfrs", d.index, "id"], `NFR id ${d.key} is used twice`, "give each NFR its own id");
  nfrList.forEach((nfr, ni) =>
    nfr.stories.forEach((story, i) => {
      if (!stories.has(story))
        add(
          S,
          ["nfrs", ni, "stories", i],
          `${nfr.id} names story ${story}, which the spec does not have`,
          `use one of ${[...stories].join(", ")}`,
        );
    }),
  );
}

/** From `architecture` on: the architecture and its references into the spec. */
export function checkArchitecture(c: Checking): void {
  const { checkpoint, add, take, stories, nfrs, spec } = c;
  if (at(checkpoint, "architecture")) {
    const A = ARTIFACT_PATHS.architecture;
    const value = take("architecture", Architecture);
    if (value) {
      const layers = checkLayers(add, value);
      for (const d of duplicates(value.modules, (m) => m.name))
        add(A, ["modules", d.index, "name"], `module ${d.key} is declared twice`, "give each module its own name");
      value.modules.forEach((module, mi) => {
        if (!layers.has(module.layer))
          add(
            A,
            ["modules", mi, "layer"],
            `module ${module.name} is in layer ${module.layer}, which is not declared`,
            `use one of ${[...layers].join(", ")}`,
          );
        module.stories.forEach((story, i) => {
          if (!stories.has(story))
            add(
              A,
              ["modules", mi, "stories", i],
              `module ${module.name} names story ${story}, which the spec does not have`,
              "name a story from spec.json",
            );
        });
      });
      for (const d of duplicates(value.persistenceInvariants, (v) => v.id))
        add(
          A,
          ["persistenceInvariants", d.index, "id"],
          `invariant id ${d.key} is used twice`,
          "give each invariant its own id",
        );
      value.persistenceInvariants.forEach((inv, ii) =>
        inv.stories.forEach((story, i) => {
          if (!stories.has(story))
            add(
              A,
              ["persistenceInvariants", ii, "stories", i],
              `${inv.id} names story ${story}, which the spec does not have`,
              "name a story from spec.json",
            );
        }),
      );
      value.nfrs.forEach((entry, i) => {
        if (!nfrs.has(entry.nfr))
          add(A, ["nfrs", i, "nfr"], `${entry.nfr} is not an NFR in spec.json`, "refer to an NFR id from spec.json");
      });
      const addressed = new Set(value.nfrs.map((n) => n.nfr));
      for (const nfr of spec?.nfrs ?? []) {
        if (!addressed.has(nfr.id))
          add(
            A,
            ["nfrs"],
            `spec NFR ${nfr.id} (${nfr.category}) is not addressed`,
            `add { "nfr": "${nfr.id}", "approach": "…" } saying how the architecture meets it`,
          );
      }
    }
  }
}

/** The architecture's layers: each declared once, importing only declared layers other than itself. */
function checkLayers(add: Checking["add"], value: Architecture): Set<string> {
  const A = ARTIFACT_PATHS.architecture;
  const layers = new Set(value.layers.map((l) => l.name));
  for (const d of duplicates(value.layers, (l) => l.name))
    add(A, ["layers", d.index, "name"], `layer ${d.key} is declared twice`, "merge the two layers or rename one");
  value.layers.forEach((layer, li) =>
    layer.mayImport.forEach((target, i) => {
      if (!layers.has(target))
        add(
          A,
          ["layers", li, "mayImport", i],
          `layer ${layer.name} may import ${target}, which is not a layer`,
          `declare layer ${target} or use one of ${[...layers].join(", ")}`,
        );
      else if (target === layer.name)
        add(
          A,
          ["layers", li, "mayImport", i],
          `layer ${layer.name} lists itself`,
          "remove it: a layer may always import itself",
        );
    }),
  );
  return layers;
}

/** From `db-design` on: the tables, and every persistence invariant realised by them. */
export function checkDbDesign(c: Checking): void {
  const { checkpoint, artifacts, add, take, stories } = c;
  if (at(checkpoint, "db-design")) {
    const D = ARTIFACT_PATHS.dbDesign;
    const value = take("dbDesign", DbDesign);
    if (value) {
      const tables = new Map(value.tables.map((t) => [t.name, new Set(t.columns.map((c) => c.name))]));
      for (const d of duplicates(value.tables, (t) => t.name))
        add(D, ["tables", d.index, "name"], `table ${d.key} is described twice`, "describe each table once");
      checkTables(add, value, tables, c.options.existingTables);
      for (const d of duplicates(value.migrations, (m) => m.id))
        add(D, ["migrations", d.index, "id"], `migration ${d.key} is planned twice`, "give each migration its own id");
      const invariants = new Map((artifacts.architecture?.persistenceInvariants ?? []).map((inv) => [inv.id, inv]));
      const realised = new Set<string>();
      value.migrations.forEach((migration, mi) => {
        if (!stories.has(migration.story))
          add(
            D,
            ["migrations", mi, "story"],
            `migration ${migration.id} is for story ${migration.story}, which the spec does not have`,
            "plan it under a story from spec.json",
          );
        migration.realizes.forEach((id, i) => {
          realised.add(id);
          if (!invariants.has(id))
            add(
              D,
              ["migrations", mi, "realizes", i],
              `${id} is not a persistence invariant in architecture.json`,
              "refer to an invariant id from architecture.json",
            );
        });
      });
      artifacts.architecture?.persistenceInvariants.forEach((inv, ii) => {
        if (!realised.has(inv.id))
          add(
            D,
            ["migrations"],
            `persistence invariant ${inv.id} (${inv.statement}) is realised by no migration`,
            `add ${inv.id} to the \`realizes\` of the migration that makes the database enforce it`,
          );
        if (inv.table && !tables.has(inv.table)) {
          add(
            ARTIFACT_PATHS.architecture,
            ["persistenceInvariants", ii, "table"],
            `${inv.id} is about table ${inv.table}, which db-design.json does not describe`,
            `describe ${inv.table} in db-design.json or correct the table name`,
          );
        }
      });
    }
  }
}

/** Each table of the db design: columns listed once, keys naming its columns, foreign keys described tables and columns. */
function checkTables(
  add: Checking["add"],
  value: DbDesign,
  tables: Map<string, Set<string>>,
  existing: ValidateOptions["existingTables"],
): void {
  const D = ARTIFACT_PATHS.dbDesign;
  value.tables.forEach((table, ti) => {
    const columns = tables.get(table.name)!;
    for (const d of duplicates(table.columns, (c) => c.name))
      add(
        D,
        ["tables", ti, "columns", d.index, "name"],
        `column ${table.name}.${d.key} is listed twice`,
        "list each column once",
      );
    const mustExist = (cols: string[], path: Array<string | number>) =>
      cols.forEach((col, i) => {
        if (!columns.has(col))
          add(
            D,
            [...path, i],
            `${table.name} has no column ${col}`,
            `add column ${col} or use one of ${[...columns].join(", ")}`,
          );
      });
    mustExist(table.primaryKey, ["tables", ti, "primaryKey"]);
    table.unique.forEach((cols, ui) => mustExist(cols, ["tables", ti, "unique", ui]));
    table.foreignKeys.forEach((fk, fi) => {
      mustExist(fk.columns, ["tables", ti, "foreignKeys", fi, "columns"]);
      const described = tables.get(fk.references.table);
      // A table the feature does not create may already be in the parent's schema.
      const target = described ?? existing?.get(fk.references.table);
      const where = described ? "" : " in the parent database";
      if (!target) {
        if (existing)
          add(
            D,
            ["tables", ti, "foreignKeys", fi, "references", "table"],
            `foreign key to ${fk.references.table}, which db-design.json does not describe and the parent database does not hold`,
            `describe ${fk.references.table} if the feature creates it, or correct the name (the parent has ${[...existing.keys()].sort().join(", ") || "no tables"})`,
          );
      } else
        fk.references.columns.forEach((col, i) => {
          if (!target.has(col))
            add(
              D,
              ["tables", ti, "foreignKeys", fi, "references", "columns", i],
              `${fk.references.table} has no column ${col}${where}`,
              `reference one of ${[...target].join(", ")}`,
            );
        });
    });
  });
}

/** From `ux` on, when a story is user-facing or there is a ux file: every such story has a screen. */
export function checkUx(c: Checking): void {
  const { files, checkpoint, add, take, stories, spec } = c;
  const userFacing = spec?.stories.filter((s) => s.userFacing).map((s) => s.id) ?? [];
  const U = ARTIFACT_PATHS.ux;
  if (at(checkpoint, "ux") && (userFacing.length > 0 || files[U] !== undefined)) {
    const ux = take("ux", Ux);
    if (ux) {
      for (const d of duplicates(ux.screens, (s) => s.id))
        add(U, ["screens", d.index, "id"], `screen ${d.key} is described twice`, "give each screen its own id");
      const covered = new Set<string>();
      ux.screens.forEach((screen, si) =>
        screen.stories.forEach((story, i) => {
          covered.add(story);
          if (!stories.has(story))
            add(
              U,
              ["screens", si, "stories", i],
              `screen ${screen.id} names story ${story}, which the spec does not have`,
              "name a story from spec.json",
            );
        }),
      );
      for (const story of userFacing) {
        if (!covered.has(story))
          add(
            U,
            ["screens"],
            `user-facing story ${story} has no screen`,
            `add a screen whose \`stories\` include ${story}`,
          );
      }
    }
  }
}

/** At `test-list`: every AC tested, every invariant proven, tests inside the test globs. */
export function checkTestList(c: Checking): void {
  const { checkpoint, options, artifacts, add, take, acs } = c;
  if (at(checkpoint, "test-list")) {
    const T = ARTIFACT_PATHS.testList;
    const list = take("testList", TestList);
    if (list) {
      const tested = new Set<string>();
      const proven = new Set<string>();
      const invariants = new Set(artifacts.architecture?.persistenceInvariants.map((i) => i.id) ?? []);
      const isTestFile = options.testGlobs ? picomatch(options.testGlobs, { dot: true }) : undefined;
      list.tests.forEach((test, ti) => {
        tested.add(test.ac);
        if (!acs.has(test.ac))
          add(
            T,
            ["tests", ti, "ac"],
            `${test.id} names ${test.ac}, which is not an acceptance criterion in spec.json`,
            `use one of ${[...acs].join(", ")}`,
          );
        if (test.invariant) {
          proven.add(test.invariant);
          if (!invariants.has(test.invariant))
            add(
              T,
              ["tests", ti, "invariant"],
              `${test.id} proves ${test.invariant}, which is not a persistence invariant in architecture.json`,
              "refer to an invariant id from architecture.json or drop the field",
            );
        }
        if (isTestFile && !isTestFile(test.file))
          add(
            T,
            ["tests", ti, "file"],
            `${test.id} lives in ${test.file}, which the configured test globs do not cover`,
            `move it under one of ${options.testGlobs!.join(", ")}`,
          );
      });
      for (const ac of acs) {
        if (!tested.has(ac))
          add(T, ["tests"], `acceptance criterion ${ac} has no test`, `add a test whose \`ac\` is ${ac}`);
      }
      for (const inv of artifacts.architecture?.persistenceInvariants ?? []) {
        if (!proven.has(inv.id))
          add(
            T,
            ["tests"],
            `persistence invariant ${inv.id} (${inv.statement}) is proven by no test`,
            `add a test with "invariant": "${inv.id}" that runs against the database branch`,
          );
      }
      if ((artifacts.architecture?.layers.length ?? 0) > 1 && !list.tests.some((t) => t.kind === "fitness")) {
        add(
          T,
          ["tests"],
          "the architecture declares layers but no fitness test checks them",
          'add a test of kind "fitness" that fails when a layer imports what it may not',
        );
      }
    }
  }
}
