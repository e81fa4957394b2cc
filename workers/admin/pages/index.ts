import { Hono } from "hono";
import type { AdminEnv } from "../context";
import { aiApprovalsPage } from "./ai-approvals";
import { apiSettingsPage } from "./api-settings";
import { appDeliveriesPage } from "./app-deliveries";
import { appsPage } from "./apps";
import { domainsPage } from "./domains";
import { home } from "./home";
import { linksPage } from "./links";
import { orderDetailPage } from "./order-detail";
import { ordersPage } from "./orders";
import { productsPage } from "./products";
import { selectStorePage } from "./select-store";
import { settingsPage } from "./settings";

/** The admin's server-rendered pages (Hono JSX). */
export const pages = new Hono<AdminEnv>();
pages.route("/", home);
pages.route("/", productsPage);
pages.route("/", ordersPage);
pages.route("/", orderDetailPage);
pages.route("/", settingsPage);
pages.route("/", domainsPage);
pages.route("/", appsPage);
pages.route("/", appDeliveriesPage);
pages.route("/", linksPage);
pages.route("/", apiSettingsPage);
pages.route("/", aiApprovalsPage);
pages.route("/", selectStorePage);
