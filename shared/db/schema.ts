/**
 * Drizzle schema. It mirrors migrations/*.sql, which are the source of truth (they also carry RLS,
 * grants and functions that drizzle does not model); test/schema.test.ts fails if the two drift.
 */
export * from "./schema-core";
export * from "./schema-catalogue";
export * from "./schema-orders";
export * from "./schema-fulfilment";
export * from "./schema-events";
export * from "./schema-apps";
export * from "./schema-domains";
export * from "./schema-marketing";
export * from "./schema-restock";
export * from "./schema-theme";
export * from "./schema-collections";
export * from "./schema-media";
export * from "./schema-assistant";
