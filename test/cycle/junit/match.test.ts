import { describe, expect, it } from "vitest";
import {
  findTestCase,
  locateTestCase,
  locateTestCases,
  type Flavour,
  type LoadError,
  type TestCaseResult,
} from "../../../src/cycle/junit/index.js";

/**
 * Finding a test-list entry (match.ts) in reports as the parser gives them: the fields each runner's
 * report fills (see the runners' test files for the recorded reports), one rule at a time.
 */

const passed = (name: string, fields: Partial<TestCaseResult> = {}): TestCaseResult => ({
  name,
  outcome: "passed",
  ...fields,
});
const on = (flavour: Flavour, tests: TestCaseResult[], loadErrors: LoadError[] = []) => ({
  flavour,
  tests,
  loadErrors,
});
const status = (report: Parameters<typeof locateTestCase>[0], file: string, title: string) =>
  locateTestCase(report, { file, title }).status;

describe("a test's file", () => {
  it.each([
    ["test/cart.test.js", "test/cart.test.js"],
    ["/home/ci/repo/test/cart.test.js", "test/cart.test.js"],
    ["test/cart.test.js", "/home/ci/repo/test/cart.test.js"],
    ["file:///home/ci/repo/test/cart.test.js", "test/cart.test.js"],
    ["test\\cart.test.js", "test/cart.test.js"],
    ["test//cart.test.js", "test/cart.test.js"],
    ["././test/cart.test.js", "test/cart.test.js"],
    ["  test/cart.test.js ", "./test/cart.test.js"],
    ["file:///home/ci/repo/test/cart.test.js", "/home/ci/repo/test/cart.test.js"],
    // A runner started in a subfolder: "../" is a folder, not the "./" a path may start with.
    ["../test/cart.test.js", "test/cart.test.js"],
  ])("%s is the file %s", (reported, wanted) => {
    expect(status(on("vitest", [passed("t", { file: reported })]), wanted, "t")).toBe("found");
  });

  it.each([
    ["test/mycart.test.js", "test/cart.test.js"],
    ["test/cart.test.js", "test/cart.test.jsx"],
    ["other/test/cart.test.js", "another/test/cart.test.js"],
    // Only a leading file:// is a URL's scheme.
    ["test/file://cart.test.js", "test/cart.test.js"],
  ])("%s is not the file %s", (reported, wanted) => {
    expect(status(on("vitest", [passed("t", { file: reported })]), wanted, "t")).toBe("missing");
  });

  it("is the dotted class of pytest and Surefire, a leading part of it matching a tail of the file's path", () => {
    const pytest = on("pytest", [passed("test_x", { classname: "tests.test_cart.TestCart" })]);
    expect(status(pytest, "tests/test_cart.py", "test_x")).toBe("found");
    expect(status(pytest, "python/tests/test_cart.py", "test_x")).toBe("found");
    expect(status(pytest, "test_cart.py", "test_x")).toBe("missing");
    expect(status(pytest, "tests/test_carts.py", "test_x")).toBe("missing");
    // Only the file's own extension goes: a dot in a folder's name stays ("api.v2" is one folder).
    expect(status(pytest, "services/api.v2/tests/test_cart.py", "test_x")).toBe("found");
    const surefire = on("surefire", [passed("pays", { classname: "shop.CartTest$Checkout" })]);
    expect(status(surefire, "src/test/java/shop/CartTest.java", "pays")).toBe("found");
    expect(status(surefire, "src/test/java/billing/CartTest.java", "pays")).toBe("missing");
    expect(status(surefire, "CartTest.java", "pays")).toBe("missing");
  });

  it("is Go's package import path, the file's folder a tail of it, or for the root package go.mod's module path", () => {
    const go = on("go", [passed("TestX", { classname: "example.com/shop/cart" })]);
    expect(status(go, "cart/cart_test.go", "TestX")).toBe("found");
    expect(status(go, "shop/cart/cart_test.go", "TestX")).toBe("found");
    expect(status(go, "example.com/shop/cart/cart_test.go", "TestX")).toBe("found");
    expect(status(go, "././cart/cart_test.go", "TestX")).toBe("found");
    // A root file's package is the module's own: without go.mod any package could be it, so none is.
    expect(status(go, "main_test.go", "TestX")).toBe("missing");
    expect(status({ ...go, goModule: "example.com/shop" }, "main_test.go", "TestX")).toBe("missing");
    const root = on("go", [passed("TestX", { classname: "example.com/shop" })]);
    expect(status({ ...root, goModule: "example.com/shop" }, "main_test.go", "TestX")).toBe("found");
    expect(status(root, "main_test.go", "TestX")).toBe("missing");
    expect(status(go, "art/cart_test.go", "TestX")).toBe("missing");
    expect(status(go, "refunds/refunds_test.go", "TestX")).toBe("missing");
  });

  it("on the generic rules, is the file or the dotted classname", () => {
    const unknown = on("unknown", [
      passed("a", { classname: "test/cart.test.js" }),
      passed("b", { classname: "shop.CartTest" }),
    ]);
    expect(status(unknown, "test/cart.test.js", "a")).toBe("found");
    expect(status(unknown, "src/shop/CartTest.java", "b")).toBe("found");
    // A classname that is not the file may still be a describe block: the test is not placed, so
    // it counts for no file (it may be another's).
    expect(status(unknown, "test/other.test.js", "a")).toBe("missing");
    const both = on("unknown", [
      passed("a", { classname: "test/cart.test.js" }),
      passed("a", { classname: "test/other.test.js" }),
    ]);
    expect(locateTestCase(both, { file: "test/other.test.js", title: "a" })).toEqual({
      status: "found",
      test: passed("a", { classname: "test/other.test.js" }),
    });
  });

  it("is not known when the report says none: such a test counts for no file, and the one placed in the file is found", () => {
    // A test the report places nowhere may be another file's: the entry's own may not have run.
    expect(status(on("node", [passed("t")]), "test/any.test.js", "t")).toBe("missing");
    expect(status(on("jest", [passed("t", { classname: "t" })]), "test/any.test.js", "t")).toBe("missing");
    expect(status(on("go", [passed("TestX")]), "cart/cart_test.go", "TestX")).toBe("missing");
    expect(status(on("pytest", [passed("test_x", { classname: "" })]), "tests/test_x.py", "test_x")).toBe("missing");
    expect(
      status(on("surefire", [passed("pays", { classname: "Checkout" })]), "src/test/java/shop/CartTest.java", "pays"),
    ).toBe("missing");
    // Surefire's report file names the class (TEST-shop.CartTest.xml) where display names hide it.
    const inReport = (reportClass: string) => on("surefire", [passed("pays", { classname: "Checkout", reportClass })]);
    expect(status(inReport("shop.CartTest"), "src/test/java/shop/CartTest.java", "pays")).toBe("found");
    expect(status(inReport("shop.RefundTest"), "src/test/java/shop/CartTest.java", "pays")).toBe("missing");
    const mixed = on("vitest", [passed("t"), passed("t", { file: "test/a.test.js", classname: "placed" })]);
    expect(locateTestCase(mixed, { file: "test/a.test.js", title: "t" })).toEqual({
      status: "found",
      test: passed("t", { file: "test/a.test.js", classname: "placed" }),
    });
  });

  it("on pytest, is another module's when the classname is a top-level module that is not the file", () => {
    expect(status(on("pytest", [passed("test_x", { classname: "test_a" })]), "test_b.py", "test_x")).toBe("missing");
    expect(status(on("pytest", [passed("test_x", { classname: "test_a" })]), "test_a.py", "test_x")).toBe("found");
  });

  it("is another file's when the report places the test elsewhere, whatever its classname", () => {
    expect(
      status(
        on("pytest", [passed("test_x", { classname: "tests.test_a", file: "tests/test_b.py" })]),
        "tests/test_b.py",
        "test_x",
      ),
    ).toBe("found");
    expect(
      status(
        on("pytest", [passed("test_x", { classname: "tests.test_a", file: "tests/test_a.py" })]),
        "tests/test_b.py",
        "test_x",
      ),
    ).toBe("missing");
    expect(
      status(on("go", [passed("TestX", { classname: "example.com/shop/other" })]), "cart/cart_test.go", "TestX"),
    ).toBe("missing");
  });
});

describe("a test's title", () => {
  it.each<[Flavour, string, string[]]>([
    [
      "vitest",
      "cart > shipping > ships abroad",
      ["cart > shipping > ships abroad", "cart › shipping › ships abroad", "  cart >  shipping\t> ships abroad "],
    ],
    ["jest", "cart shipping ships abroad", ["cart > shipping > ships abroad", "cart shipping ships abroad"]],
    ["mocha", "cart shipping ships abroad", ["cart > shipping > ships abroad"]],
    ["go", "TestCheckout/pays_by_card", ["TestCheckout/pays by card"]],
    ["surefire", "paysByCard", ["paysByCard()"]],
    ["pytest", "test_x[Größe]".replace("ö", "\\xf6").replace("ß", "\\xdf"), ["test_x[Größe]"]],
    ["pytest", "test_x[\\u0100]", ["test_x[Ā]"]],
    ["pytest", "test_x[\\U0001f600]", ["test_x[😀]"]],
    // The generic rules try every runner's form.
    ["unknown", "cart shipping ships abroad", ["cart > shipping > ships abroad"]],
    ["unknown", "cart > shipping > ships abroad", ["cart › shipping › ships abroad"]],
    ["unknown", "TestCheckout/pays_by_card", ["TestCheckout/pays by card"]],
    ["unknown", "paysByCard", ["paysByCard()"]],
    // The report's whitespace is squashed as the title's is.
    ["go", "TestX ", ["TestX"]],
    ["surefire", "pays  by card", ["pays by card"]],
  ])("on %s, %j is found by its forms", (flavour, name, titles) => {
    const report = on(flavour, [passed(name, { file: "test/a.test.js" })]);
    for (const title of titles) expect(status(report, "test/a.test.js", title), title).toBe("found");
  });

  it.each<[Flavour, string, string]>([
    ["vitest", "cart shipping ships abroad", "cart > shipping > ships abroad"],
    ["node", "cart shipping ships abroad", "cart > shipping > ships abroad"],
    ["jest", "cart > shipping > ships abroad", "cart shipping ships abroad"],
    ["vitest", "TestCheckout/pays_by_card", "TestCheckout/pays by card"],
    ["vitest", "paysByCard", "paysByCard()"],
    ["vitest", "test_x[\\xf6]", "test_x[ö]"],
    ["jest", "cart > ships abroad", "cart › ships abroad"],
    ["vitest", "t", "test/a.test.js::t"],
  ])("on %s, %j is not found as %j: that form belongs to another runner", (flavour, name, title) => {
    expect(status(on(flavour, [passed(name, { file: "test/a.test.js" })]), "test/a.test.js", title)).toBe("missing");
  });

  it("on pytest, is found by its node id when the id's path is the file's", () => {
    const report = on("pytest", [passed("test_x", { classname: "tests.test_cart.TestCart" })]);
    expect(status(report, "tests/test_cart.py", "tests/test_cart.py::TestCart::test_x")).toBe("found");
    expect(status(report, "tests/test_cart.py", "TestCart::test_x")).toBe("found");
    expect(status(report, "tests/test_cart.py", "tests/other.py::TestCart::test_x")).toBe("missing");
    expect(status(report, "tests/test_cart.py", "tests/test_cart.py::")).toBe("missing");
    const generic = on("unknown", report.tests);
    expect(status(generic, "tests/test_cart.py", "tests/test_cart.py::TestCart::test_x")).toBe("found");
  });

  it("on node, is found with its suites joined by >, and with the quotes node 20 escaped twice", () => {
    const file = "test/a.test.js";
    const report = on("node", [passed("says &quot;hi&quot;", { file, suites: ["greeting", "in &quot;French&quot;"] })]);
    for (const title of [
      'says "hi"',
      "says &quot;hi&quot;",
      'greeting > in "French" > says "hi"',
      'greeting › in "French" › says "hi"',
    ])
      expect(status(report, "test/a.test.js", title), title).toBe("found");
    const quotedSuite = on("node", [passed("says hi", { file, suites: ["greeting", "in &quot;French&quot;"] })]);
    expect(status(quotedSuite, "test/a.test.js", 'greeting > in "French" > says hi')).toBe("found");
    expect(status(on("vitest", [passed("says &quot;hi&quot;", { file })]), "test/a.test.js", 'says "hi"')).toBe(
      "missing",
    );
  });

  it("on jest and mocha, is found by the describe blocks a title template writes as the classname", () => {
    const file = "test/a.test.js";
    const bare = on("jest", [passed("ships abroad", { file, classname: "cart shipping" })]);
    expect(status(bare, "test/a.test.js", "cart shipping ships abroad")).toBe("found");
    const whole = on("mocha", [passed("ships abroad", { file, classname: "cart shipping ships abroad" })]);
    expect(status(whole, "test/a.test.js", "cart > shipping > ships abroad")).toBe("found");
    const same = on("jest", [passed("ships abroad", { file, classname: "ships abroad" })]);
    expect(status(same, "test/a.test.js", "ships abroad ships abroad")).toBe("missing");
    const blank = on("jest", [passed("ships abroad", { file, classname: "  " })]);
    expect(status(blank, "test/a.test.js", "ships abroad")).toBe("found");
    // jest-junit's ancestorSeparator " > ": the blocks in the classname joined by it, with either template.
    const separated = on("jest", [passed("ships abroad", { file, classname: "cart > shipping" })]);
    for (const title of ["cart > shipping > ships abroad", "cart shipping ships abroad"])
      expect(status(separated, file, title), title).toBe("found");
    const wholeSeparated = on("jest", [
      passed("cart > shipping ships abroad", { file, classname: "cart > shipping ships abroad" }),
    ]);
    for (const title of ["cart > shipping > ships abroad", "cart > shipping ships abroad"])
      expect(status(wholeSeparated, file, title), title).toBe("found");
    expect(
      status(
        on("vitest", [passed("ships abroad", { file, classname: "cart shipping" })]),
        "test/a.test.js",
        "cart shipping ships abroad",
      ),
    ).toBe("missing");
  });

  it("on Surefire, is found by method, Class.method, Class#method, and a nested class's forms", () => {
    const report = on("surefire", [passed("paysByCard()", { classname: "shop.CartTest$Checkout" })]);
    for (const title of [
      "paysByCard",
      "paysByCard()",
      "CartTest.paysByCard",
      "CartTest#paysByCard",
      "Checkout.paysByCard",
      "CartTest.Checkout.paysByCard",
    ])
      expect(status(report, "src/test/java/shop/CartTest.java", title), title).toBe("found");
    expect(status(report, "src/test/java/shop/CartTest.java", "Other.paysByCard")).toBe("missing");
    const flat = on("surefire", [passed("pays", { classname: "shop.CartTest" })]);
    expect(status(flat, "src/test/java/shop/CartTest.java", "CartTest.CartTest.pays")).toBe("missing");
  });

  // Each range's first and last code point, as Python's unicode_escape writes it.
  it.each([
    ["Größe", "Gr\\xf6\\xdfe", "Größe"],
    ["U+0080", "\\x80", "\u0080"],
    ["U+00FF", "\\xff", "ÿ"],
    ["U+0100", "\\u0100", "Ā"],
    ["U+FFFF", "\\uffff", "\uffff"],
    ["U+1F600", "\\U0001f600", "😀"],
    ["U+10000", "\\U00010000", "\u{10000}"],
  ])(
    "on pytest and the generic rules, a parameter id with %s is found as Class::test where pytest escaped it as %s",
    (_, escaped, written) => {
      // pytest escapes the id as Python's unicode_escape does; the Class::test form is built from the name
      // as written, so only the title's own escaping can meet it.
      const tests = [passed(`test_x[${escaped}]`, { classname: "tests.test_cart.TestCart" })];
      for (const flavour of ["pytest", "unknown"] as const)
        expect(
          locateTestCase(on(flavour, tests), { file: "tests/test_cart.py", title: `TestCart::test_x[${written}]` }),
          flavour,
        ).toEqual({ status: "found", test: tests[0] });
    },
  );

  it("on pytest, is found as Class::test", () => {
    const report = on("pytest", [passed("test_x", { classname: "tests.test_cart.TestCart.TestInner" })]);
    expect(status(report, "tests/test_cart.py", "TestCart::TestInner::test_x")).toBe("found");
    expect(
      status(on("pytest", [passed("test_x", { classname: "tests.test_cart" })]), "tests/test_cart.py", "::test_x"),
    ).toBe("missing");
  });

  it("refuses an empty file or title", () => {
    const report = on("vitest", [passed("t")]);
    expect(() => locateTestCase(report, { file: " ", title: "t" })).toThrow(/the test file is empty/);
    expect(() => locateTestCase(report, { file: "a.js", title: "" })).toThrow(/the test title is empty/);
  });
});

describe("what a title's matches make of an entry", () => {
  it("is ambiguous when more than one test could be it, listing them in the report's order", () => {
    const a = passed("t", { file: "test/x.test.js", classname: "a" });
    const b = passed("t", { file: "test/x.test.js", classname: "b" });
    expect(locateTestCase(on("node", [a, b]), { file: "test/x.test.js", title: "t" })).toEqual({
      status: "ambiguous",
      candidates: [a, b],
    });
    const placed = [passed("t", { file: "test/x.test.js" }), passed("t", { file: "test/x.test.js", classname: "2" })];
    expect(locateTestCase(on("vitest", placed), { file: "test/x.test.js", title: "t" })).toEqual({
      status: "ambiguous",
      candidates: placed,
    });
    expect(findTestCase(on("node", [a, b]), { file: "test/x.test.js", title: "t" })).toBeUndefined();
  });

  it("lists the candidates in the report's order whichever of the title's forms each one matched", () => {
    // "a > b" on the generic rules: the first test has the jest form, the second the title itself.
    const jestForm = passed("a b", { file: "test/x.test.js" });
    const itself = passed("a > b", { file: "test/x.test.js" });
    expect(locateTestCase(on("unknown", [jestForm, itself]), { file: "test/x.test.js", title: "a > b" })).toEqual({
      status: "ambiguous",
      candidates: [jestForm, itself],
    });
  });

  it("finds each of three tests that share a title in its own file, and none when none is placed", () => {
    const placed = ["test/a.test.js", "test/b.test.js", "test/c.test.js"].map((file) => passed("t", { file }));
    const report = on("vitest", placed);
    for (const test of placed)
      expect(locateTestCase(report, { file: test.file!, title: "t" }), test.file).toEqual({ status: "found", test });
    const unplaced = [
      passed("t", { classname: "a" }),
      passed("t", { classname: "b" }),
      passed("t", { classname: "c" }),
    ];
    expect(locateTestCase(on("node", unplaced), { file: "test/x.test.js", title: "t" })).toMatchObject({
      status: "missing",
      reason:
        "the report has 3 tests of that title but does not say which file they ran from, so none counts for test/x.test.js: it may be another file's, and test/x.test.js may not have run",
    });
  });

  it("counts one test once, however many of its forms match", () => {
    // "pays()" is both the name itself and, without its parentheses, the method's name.
    const report = on("unknown", [passed("pays()", { classname: "shop.CartTest" })]);
    expect(status(report, "src/shop/CartTest.java", "pays()")).toBe("found");
    expect(
      locateTestCases(on("unknown", report.tests), [{ file: "src/shop/CartTest.java", title: "pays()" }]).map(
        (l) => l.status,
      ),
    ).toEqual(["found"]);
  });

  it("is not loaded when the file, class or package did not load, as a failed-error test saying why", () => {
    const loadErrors: LoadError[] = [
      { file: "test/broken.test.js", message: "Cannot find module" },
      { classname: "shop.RefundTest", message: "java.lang.ExceptionInInitializerError" },
      { classname: "example.com/shop/refunds", message: "build failed" },
      { message: "the report counts 1 failure(s)" },
    ];
    const not = (flavour: Flavour, file: string) =>
      locateTestCase(on(flavour, [], loadErrors), { file, title: "the test" });
    expect(not("vitest", "/repo/test/broken.test.js")).toEqual({
      status: "not-loaded",
      loadError: loadErrors[0],
      test: {
        file: "/repo/test/broken.test.js",
        name: "the test",
        outcome: "failed-error",
        type: "load error",
        message:
          "/repo/test/broken.test.js failed before its tests ran (it did not load, compile or set up), so this test never ran: Cannot find module",
      },
    });
    expect(not("surefire", "src/test/java/shop/RefundTest.java")).toMatchObject({
      status: "not-loaded",
      loadError: loadErrors[1],
    });
    expect(not("go", "refunds/refunds_test.go")).toMatchObject({ status: "not-loaded", loadError: loadErrors[2] });
    expect(not("surefire", "refunds/refunds_test.go").status).toBe("missing");
    expect(not("go", "src/test/java/shop/RefundTest.java").status).toBe("missing");
    expect(not("vitest", "test/other.test.js").status).toBe("missing");
    expect(findTestCase(on("vitest", [], loadErrors), { file: "test/broken.test.js", title: "x" })?.outcome).toBe(
      "failed-error",
    );
  });

  it("prefers a test it finds to its file's load error", () => {
    const report = on(
      "vitest",
      [passed("t", { file: "test/a.test.js" })],
      [{ file: "test/a.test.js", message: "boom" }],
    );
    expect(status(report, "test/a.test.js", "t")).toBe("found");
  });
});

describe("a missing entry's nearest titles and hint", () => {
  const missing = (report: ReturnType<typeof on>, file: string, title: string) =>
    locateTestCase(report, { file, title });

  it("names up to three titles of the file nearest to the one wanted, nearest first, then by name", () => {
    const report = on("vitest", [
      passed("applies a ten percent discount", { file: "test/cart.test.js" }),
      passed("applies a tan percent discount", { file: "test/cart.test.js" }),
      passed("applies a ten percent discounts", { file: "test/cart.test.js" }),
      passed("applies a 10 percent discount", { file: "test/cart.test.js" }),
      passed("applies a ten percent discount!", { file: "test/other.test.js" }),
      passed("ships abroad", { file: "test/cart.test.js" }),
    ]);
    expect(missing(report, "test/cart.test.js", "applies a ten percent discoun")).toEqual({
      status: "missing",
      nearest: ["applies a ten percent discount", "applies a tan percent discount", "applies a ten percent discounts"],
    });
  });

  it("leaves out titles further than half the wanted title's length, and takes at least three edits as near", () => {
    const report = on("vitest", [
      passed("abcdefgh", { file: "a.js" }),
      passed("xyz", { file: "a.js" }),
      passed("ab", { file: "a.js" }),
    ]);
    expect(missing(report, "a.js", "abcdefghijklmnopq")).toMatchObject({ nearest: ["abcdefgh"] });
    expect(missing(report, "a.js", "abcdefghijklmnopqr")).toMatchObject({ nearest: [] });
    expect(missing(report, "a.js", "x")).toMatchObject({ nearest: ["ab", "xyz"] });
    // The nine edits are counted between the gists: punctuation at the ends is no edit.
    const bracketed = on("vitest", [passed("(abcdefgh)", { file: "a.js" })]);
    expect(missing(bracketed, "a.js", "abcdefghijklmnopq")).toMatchObject({ nearest: ["(abcdefgh)"] });
  });

  it("reads titles as a person means them: case, separators and punctuation left out", () => {
    const report = on("vitest", [passed("Cart > Ships_Abroad (EU)", { file: "a.js" })]);
    expect(missing(report, "a.js", "cart ships abroad eu!!!!!!!!!")).toMatchObject({
      nearest: ["Cart > Ships_Abroad (EU)"],
    });
    // A run of separators is one space: "cart > ships" is nearer to "cart ships" than "cart ship" is;
    // and "cart_ships" one edit from "cartships", further than "CartShips".
    const separated = on("vitest", [passed("cart ship", { file: "a.js" }), passed("cart > ships", { file: "a.js" })]);
    expect(missing(separated, "a.js", "cart ships")).toMatchObject({ nearest: ["cart > ships", "cart ship"] });
    const joined = on("vitest", [passed("cart_ships", { file: "a.js" }), passed("CartShips", { file: "a.js" })]);
    expect(missing(joined, "a.js", "cartships")).toMatchObject({ nearest: ["CartShips", "cart_ships"] });
  });

  it.each<Flavour>(["pytest", "unknown"])(
    "on %s, reads a parameter id pytest escaped as the source writes it, so a near one is named",
    (flavour) => {
      // Only the id read back quotes the wanted title: as written, it is far from it.
      const name = "test_x[Gr\\xf6\\xdfe-\\u0100-\\U0001f600-with-a-long-parameter-id]";
      const report = on(flavour, [passed(name, { file: "tests/test_x.py" })]);
      expect(missing(report, "tests/test_x.py", "test_x[Größe-Ā-😀]")).toMatchObject({
        status: "missing",
        nearest: [name],
      });
    },
  );

  it("names a title that quotes the wanted test's own title, such as mocha's hook, however far it is", () => {
    const hook = passed('"before all" hook for "files stock at a location"', { file: "test/stock.test.js" });
    const report = on("mocha", [hook, passed("ab", { file: "test/stock.test.js" })]);
    expect(missing(report, "test/stock.test.js", "stock > files stock at a location")).toEqual({
      status: "missing",
      nearest: ['"before all" hook for "files stock at a location"'],
    });
    expect(
      missing(on("mocha", [passed('"before all" hook for "a b c"', { file: "x.js" })]), "x.js", "z > a b c"),
    ).toMatchObject({ nearest: [] });
    // The own title is what follows the last " > ", at least eight characters of it.
    const eight = on("mocha", [passed('"before all" hook for "pays now"', { file: "x.js" })]);
    expect(missing(eight, "x.js", "checkout > pays now")).toMatchObject({
      nearest: ['"before all" hook for "pays now"'],
    });
    const each = on("mocha", [passed('"before each" hook for "ships abroad quickly"', { file: "x.js" })]);
    expect(missing(each, "x.js", "cart > ships abroad quickly")).toMatchObject({
      nearest: ['"before each" hook for "ships abroad quickly"'],
    });
  });

  it("looks among all the tests when the report places none in the file, and shows a node test with its suites", () => {
    const report = on("node", [passed("ships abroad", { suites: ["cart", "shipping"] }), passed("ship abroad")]);
    expect(missing(report, "test/cart.test.js", "cart > shipping > ships abroad!")).toMatchObject({
      nearest: ["cart > shipping > ships abroad"],
    });
    const placedElsewhere = on("vitest", [passed("ships abroad", { file: "test/other.test.js" })]);
    expect(missing(placedElsewhere, "test/cart.test.js", "ships abroad")).toEqual({
      status: "missing",
      nearest: [],
      reason:
        "the report has that title only in test/other.test.js, not in test/cart.test.js: a test counts only in its own file",
    });
  });

  it("compares at most 5,000 tests, of the file or (when it places none there) of all: a near title past them is not named", () => {
    const far = (fields: Partial<TestCaseResult>) => Array.from({ length: 4_999 }, () => passed("x", fields));
    for (const fields of [{ file: "test/cart.test.js" }, {}]) {
      const within = on("vitest", [...far(fields), passed("ships abroad", fields)]);
      expect(missing(within, "test/cart.test.js", "ships abroadx"), "5,000th").toMatchObject({
        nearest: ["ships abroad"],
      });
      const past = on("vitest", [...far(fields), passed("x", fields), passed("ships abroad", fields)]);
      expect(missing(past, "test/cart.test.js", "ships abroadx"), "5,001st").toEqual({
        status: "missing",
        nearest: [],
      });
    }
  });

  it("says the runner was not recognised, for a report of unknown flavour", () => {
    expect(missing(on("unknown", []), "a.js", "t")).toEqual({
      status: "missing",
      nearest: [],
      hint: "the report's runner was not recognised, so only the generic title forms were tried: name it with runner: in .github/consort.yml",
    });
    expect(locateTestCase({ tests: [], loadErrors: [] }, { file: "a.js", title: "t" })).toMatchObject({
      hint: expect.stringMatching(/^the report's runner was not recognised/),
    });
    expect(locateTestCases({ tests: [], loadErrors: [] }, [{ file: "a.js", title: "t" }])).toEqual([
      missing(on("unknown", []), "a.js", "t"),
    ]);
  });

  it("on Surefire, says which of method names and display names the report carries, only when a near title shows it", () => {
    const methods = on("surefire", [passed("appliesATenPercentDiscount", { classname: "shop.CartTest" })]);
    expect(missing(methods, "src/test/java/shop/CartTest.java", "applies a ten percent discount")).toMatchObject({
      hint: expect.stringMatching(/^Surefire writes the test method's name, not its @DisplayName/),
    });
    expect(missing(methods, "src/test/java/shop/CartTest.java", "ships to the moon and back")).toEqual({
      status: "missing",
      nearest: [],
    });
    expect(missing(methods, "src/test/java/shop/CartTest.java", "shipsToTheMoonAndBack")).toEqual({
      status: "missing",
      nearest: [],
    });
    const display = on("surefire", [passed("applies a ten percent discount", { classname: "CartTest" })]);
    expect(missing(display, "src/test/java/shop/CartTest.java", "appliesATenPercentDiscount")).toMatchObject({
      hint: expect.stringMatching(/^this Surefire report carries display names/),
    });
    expect(missing(display, "src/test/java/shop/CartTest.java", "appliesATenPercentDiscounts")).toMatchObject({
      hint: expect.stringMatching(/^this Surefire report carries display names/),
    });
    // A report that carries display names never hears that Surefire writes method names.
    expect(missing(display, "src/test/java/shop/CartTest.java", "applies a ten percent discounts")).toEqual({
      status: "missing",
      nearest: ["applies a ten percent discount"],
    });
    const phrasedMethod = on("surefire", [
      passed("appliesATenPercentDiscount()", { classname: "shop.CartTest" }),
      passed("ships abroad", { classname: "shop.CartTest" }),
    ]);
    expect(missing(phrasedMethod, "src/test/java/shop/CartTest.java", "applies a ten percent discount")).toEqual({
      status: "missing",
      nearest: ["appliesATenPercentDiscount()"],
    });
    const both = on("surefire", [passed("appliesATenPercentDiscoun", { classname: "CartTest" })]);
    expect(missing(both, "src/test/java/shop/CartTest.java", "appliesATenPercentDiscount")).toEqual({
      status: "missing",
      nearest: ["appliesATenPercentDiscoun"],
    });
  });

  it("on jest, says the title was written without its describe blocks when a near title is its tail", () => {
    const report = on("jest", [
      passed("applies a ten percent discount", { classname: "applies a ten percent discount" }),
    ]);
    expect(missing(report, "test/cart.test.js", "cart > applies a ten percent discount")).toEqual({
      status: "missing",
      nearest: ["applies a ten percent discount"],
      hint: "jest-junit wrote the title without its describe blocks: keep jest-junit's default titleTemplate and classNameTemplate, or write the bare title in the test list",
    });
    // The blocks are in the classname, joined by a separator the cycle does not read: the hint says so.
    const slashed = on("jest", [passed("ships abroad", { classname: "cart / shipping" })]);
    expect(missing(slashed, "test/cart.test.js", "cart > shipping > ships abroad")).toEqual({
      status: "missing",
      nearest: ["ships abroad"],
      hint: 'jest-junit wrote the describe blocks into the classname with an ancestorSeparator the cycle does not read: set ancestorSeparator to " " or " > ", or write the title as the report has it',
    });
    const other = on("jest", [passed("applies a ten percent discounts", { classname: "x" })]);
    expect(missing(other, "test/cart.test.js", "applies a ten percent discount")).toEqual({
      status: "missing",
      nearest: ["applies a ten percent discounts"],
    });
    expect(missing(other, "test/cart.test.js", "ships to the moon and back")).toEqual({
      status: "missing",
      nearest: [],
    });
  });

  it("gives another runner's hint on none of vitest's reports", () => {
    const report = on("vitest", [passed("applies a ten percent discount", { file: "test/cart.test.js" })]);
    // A title the report wrote without its describe blocks (jest's hint), and a display name (Surefire's).
    expect(missing(report, "test/cart.test.js", "cart > applies a ten percent discount")).toEqual({
      status: "missing",
      nearest: ["applies a ten percent discount"],
    });
    expect(missing(report, "test/cart.test.js", "appliesATenPercentDiscount")).toEqual({
      status: "missing",
      nearest: ["applies a ten percent discount"],
    });
  });
});

describe("finding many entries at once", () => {
  it("finds each as it finds it alone, with the index of another flavour built or not", () => {
    const tests = [
      passed("cart > ships", { file: "test/a.test.js" }),
      passed("cart ships", { file: "test/a.test.js" }),
      passed("t", { file: "test/b.test.js" }),
    ];
    const queries = [
      { file: "test/a.test.js", title: "cart > ships" },
      { file: "test/a.test.js", title: "cart ships" },
      { file: "test/b.test.js", title: "t" },
      { file: "test/b.test.js", title: "nope" },
    ];
    const vitest = on("vitest", tests);
    const fresh = locateTestCases(on("jest", tests), queries);
    expect(fresh.map((l) => l.status)).toEqual(["ambiguous", "found", "found", "missing"]);
    const alone = queries.map((q) => locateTestCase(vitest, q));
    expect(alone.map((l) => l.status)).toEqual(["found", "found", "found", "missing"]);
    expect(locateTestCases(vitest, queries)).toEqual(alone);
    // The same tests read by another runner's rules: the index built for vitest's is not reused.
    expect(locateTestCases({ ...vitest, flavour: "jest" }, queries)).toEqual(fresh);
    expect(queries.map((q) => locateTestCase({ ...vitest, flavour: "jest" }, q))).toEqual(fresh);
  });
});

describe("a case from another file, class or runner is not the entry", () => {
  it("on Go, a test with no package is not placed in a root package's file: the one the report places there is found", () => {
    const placed = passed("TestX", { classname: "example.com/shop" });
    const go = { ...on("go", [passed("TestX"), placed]), goModule: "example.com/shop" };
    expect(locateTestCase(go, { file: "main_test.go", title: "TestX" })).toEqual({
      status: "found",
      test: placed,
    });
  });

  it.each<Flavour>(["jest", "mocha", "node", "vitest"])(
    "on %s, a classname that reads like the file's path does not place the test: such tests count for no file",
    (flavour) => {
      const cart = passed("t", { classname: "cart" });
      const other = passed("t", { classname: "other" });
      expect(locateTestCase(on(flavour, [cart, other]), { file: "test/cart.js", title: "t" })).toMatchObject({
        status: "missing",
        reason: expect.stringMatching(/^the report has 2 tests of that title but does not say which file/),
      });
    },
  );

  it("on pytest, a case with no name is not matched by a title that is a bare path or has no node id", () => {
    const report = on("pytest", [passed("", { classname: "tests.test_cart" })]);
    expect(status(report, "tests/test_cart.py", "tests/test_cart.py")).toBe("missing");
    expect(status(report, "tests/test_cart.py", "test_x")).toBe("missing");
  });

  it("writes Class::test only for pytest and the generic rules, and only for a classname part that is a class", () => {
    const surefire = on("surefire", [passed("pays", { classname: "shop.CartTest" })]);
    expect(status(surefire, "src/test/java/shop/CartTest.java", "CartTest::pays")).toBe("missing");
    const module = on("pytest", [passed("test_x", { classname: "tests.test_Cart" })]);
    expect(status(module, "tests/test_Cart.py", "test_Cart::test_x")).toBe("missing");
    const generic = on("unknown", [passed("test_x", { classname: "tests.test_cart.TestCart" })]);
    expect(status(generic, "tests/test_cart.py", "TestCart::test_x")).toBe("found");
  });

  it("writes Class.method only for Surefire and the generic rules", () => {
    const pytest = on("pytest", [passed("test_x", { classname: "tests.test_cart" })]);
    expect(status(pytest, "tests/test_cart.py", "test_cart.test_x")).toBe("missing");
    const generic = on("unknown", [passed("pays", { classname: "shop.CartTest" })]);
    expect(status(generic, "src/shop/CartTest.java", "CartTest.pays")).toBe("found");
  });

  it("on Surefire, drops only a trailing () from the method, and adds nested-class forms only for a nested class", () => {
    const repeated = on("surefire", [passed("repeats()[1]", { classname: "shop.CartTest" })]);
    expect(status(repeated, "src/test/java/shop/CartTest.java", "repeats()[1]")).toBe("found");
    expect(status(repeated, "src/test/java/shop/CartTest.java", "repeats[1]")).toBe("missing");
    const bracketed = on("surefire", [passed("repeats[1]", { classname: "shop.CartTest" })]);
    expect(status(bracketed, "src/test/java/shop/CartTest.java", "repeats()[1]")).toBe("missing");
    const display = on("surefire", [passed("pays", { classname: "CartTest" })]);
    expect(status(display, "src/test/java/shop/CartTest.java", "CartTest.pays")).toBe("found");
    expect(status(display, "src/test/java/shop/CartTest.java", "CartTest.CartTest.pays")).toBe("missing");
    const flat = on("surefire", [passed("pays", { classname: "shop.CartTest" })]);
    expect(status(flat, "src/test/java/shop/CartTest.java", "undefined.pays")).toBe("missing");
  });
});

describe("a test the report ties to no file, or to another, never stands for the entry", () => {
  const unplacedReason = (n: string, they: string, file: string) =>
    `the report has ${n} of that title but does not say which file ${they} ran from, so none counts for ${file}: it may be another file's, and ${file} may not have run`;

  it("is missing with the reason, the setting to change, and no nearest title but the file's own", () => {
    const report = on("node", [passed("t"), passed("t2", { file: "test/a.test.js" })]);
    expect(locateTestCase(report, { file: "test/a.test.js", title: "t" })).toEqual({
      status: "missing",
      nearest: ["t2"],
      reason: unplacedReason("a test", "it", "test/a.test.js"),
      hint: "this Node's junit reporter writes no file for a test (Node 20's writes none): run the test command on a Node whose junit reporter writes each test case's file attribute",
    });
    expect(locateTestCase(on("node", [passed("t"), passed("t")]), { file: "test/a.test.js", title: "t" })).toEqual({
      status: "missing",
      nearest: [],
      reason: unplacedReason("2 tests", "they", "test/a.test.js"),
      hint: expect.stringMatching(/^this Node's junit reporter/),
    });
  });

  it.each<[Flavour, string, TestCaseResult, RegExp]>([
    [
      "jest",
      "test/a.test.js",
      passed("t", { classname: "t" }),
      /^jest-junit wrote no file for its tests: keep its addFileAttribute on/,
    ],
    [
      "mocha",
      "test/a.test.js",
      passed("t", { classname: "t" }),
      /^mocha-junit-reporter writes no file for a test outside any describe block/,
    ],
    [
      "surefire",
      "src/test/java/shop/CartTest.java",
      passed("t", { classname: "Cart" }),
      /^this Surefire report names classes by their display names/,
    ],
    [
      "go",
      "main_test.go",
      passed("TestX", { classname: "example.com/shop" }),
      /^main_test.go is in the module's root package, which the report names by the module's path/,
    ],
    [
      "go",
      "cart/cart_test.go",
      passed("TestX"),
      /^the report names no package for it: run the tests through gotestsum/,
    ],
    [
      "pytest",
      "tests/test_a.py",
      passed("t", { classname: "" }),
      /^the report names no file for it: run pytest with the command the README gives/,
    ],
    [
      "vitest",
      "test/a.test.js",
      passed("t"),
      /^the report names no file for it: run vitest with the command the README gives/,
    ],
    [
      "unknown",
      "test/a.test.js",
      passed("t"),
      /^the report's runner was not recognised, so its tests' files could not be read/,
    ],
  ])("on %s, names the setting that makes the report say the file", (flavour, file, test, hint) => {
    expect(locateTestCase(on(flavour, [test]), { file, title: test.name })).toMatchObject({
      status: "missing",
      reason: unplacedReason("a test", "it", file),
      hint: expect.stringMatching(hint),
    });
  });

  it("names the files that have the title, up to three, when only others have it", () => {
    const files = ["test/b.test.js", "test/c.test.js", "test/d.test.js", "test/e.test.js"];
    const report = on(
      "vitest",
      files.map((file) => passed("t", { file })),
    );
    expect(locateTestCase(report, { file: "test/a.test.js", title: "t" })).toMatchObject({
      status: "missing",
      reason:
        "the report has that title only in test/b.test.js, test/c.test.js, test/d.test.js, ..., not in test/a.test.js: a test counts only in its own file",
    });
    const two = on(
      "vitest",
      files.slice(0, 2).map((file) => passed("t", { file })),
    );
    expect(locateTestCase(two, { file: "test/a.test.js", title: "t" })).toMatchObject({
      reason:
        "the report has that title only in test/b.test.js, test/c.test.js, not in test/a.test.js: a test counts only in its own file",
    });
    const go = { ...on("go", [passed("TestX", { classname: "example.com/shop/cart" })]), goModule: "example.com/shop" };
    expect(locateTestCase(go, { file: "main_test.go", title: "TestX" })).toMatchObject({
      reason:
        "the report has that title only in example.com/shop/cart, not in main_test.go: a test counts only in its own file",
    });
  });

  it("on Go, a test with a file and no package is another file's when the file is not the entry's", () => {
    const report = on("go", [passed("TestX", { file: "cart/other_test.go" })]);
    expect(locateTestCase(report, { file: "cart/cart_test.go", title: "TestX" })).toMatchObject({
      reason: expect.stringMatching(/^the report has that title only in cart\/other_test.go/),
    });
  });
});
