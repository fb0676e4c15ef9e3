-- SPDX-License-Identifier: GPL-3.0-or-later
-- 0022-policy-forecast.sql: a policy may notify when its allocation's exhaustion forecast
-- (doc/forecast.md) says the available balance runs out within forecast_days days, as its
-- usage thresholds notify (doc/policies.md).  0 = off, the value of every existing policy.
ALTER TABLE policies ADD COLUMN forecast_days BIGINT NOT NULL DEFAULT 0;
