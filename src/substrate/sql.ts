/**
 * Quoting names and text into SQL the provider writes itself (DDL cannot take bind parameters):
 * a name as a double-quoted identifier, text as a single-quoted literal, each quote doubled.
 */

/** A database, role, schema or table name as an SQL identifier. */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** Text as an SQL string literal (standard_conforming_strings: a backslash is an ordinary character). */
export const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;
