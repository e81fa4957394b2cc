import { timestamp, uuid } from "drizzle-orm/pg-core";
import { store } from "./schema-core";

/** Column helpers shared by the schema's files. */
export const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });
export const createdAt = () => ts("created_at").notNull().defaultNow();
export const updatedAt = () => ts("updated_at").notNull().defaultNow();

/** A tenant table's store_id: the store it belongs to, removed with it. */
export const storeRef = () =>
  uuid("store_id")
    .notNull()
    .references(() => store.id, { onDelete: "cascade" });
