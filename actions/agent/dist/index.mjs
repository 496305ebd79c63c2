import{dirname as e,join as i}from"node:path";import{fileURLToPath as n}from"node:url";var o=e(n(import.meta.url)),E=e(o);await import(i(o,"main.mjs"));
