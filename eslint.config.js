// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "lib/**",
      "node_modules/**",
      "actions/*/dist/**",
      "coverage/**",
      "reports/**",
      ".stryker-tmp*/**",
      "examples/*/node_modules/**",
      "**/*.d.ts",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": "off",
    },
  },
  {
    // Plain JavaScript that Node runs as is: the CLI's entry and the build it reads.
    files: ["bin/**/*.js", "scripts/**/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
  },
  {
    // dependency-cruiser reads its configuration as CommonJS.
    files: [".dependency-cruiser.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { module: "writable" } },
  },
  {
    files: ["test/**/*.ts", "**/*.test.ts"],
    rules: {
      // A test that is skipped or focused cannot fail: never land one.
      "no-restricted-properties": [
        "error",
        { object: "it", property: "only" },
        { object: "it", property: "skip" },
        { object: "test", property: "only" },
        { object: "test", property: "skip" },
        { object: "describe", property: "only" },
        { object: "describe", property: "skip" },
        { object: "it", property: "todo" },
        { object: "test", property: "todo" },
      ],
    },
  },
);
