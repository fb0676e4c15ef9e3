/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_assoc.c - `allot assoc ...`: a user's membership of an account on a cluster.
 * Associations have no name: (cluster, account, user, partition) identifies one, and the
 * API takes that key in the body of PATCH and DELETE (doc/api.md). */
#include "cli/cli.h"

static const struct field keys[] = {
    {"cluster", "cluster", V_STR, "cluster name (required)"},
    {"account", "account", V_STR, "account name (required)"},
    {"user", "user", V_STR, "user name (required)"},
    {"partition", "partition", V_STR, "one partition only (default: all)"},
    {0},
};

static const struct field add_fields[] = {
    {"cluster", "cluster", V_STR, "cluster name (required)"},
    {"account", "account", V_STR, "account name (required)"},
    {"user", "user", V_STR, "user name (required)"},
    {"partition", "partition", V_STR, "one partition only (default: all)"},
    {"fairshare", "shares", V_INT, "fair-share RawShares (default 1)"},
    {"shares", "shares", V_INT, "same as fairshare"},
    {"defaultqos", "default_qos", V_STR, "default QOS"},
    {"qos", "qos", V_STR, "comma-separated allowed QOS"},
    {0},
};

static const struct field modify_fields[] = {
    {"fairshare", "shares", V_INT, "fair-share RawShares"},
    {"shares", "shares", V_INT, "same as fairshare"},
    {"defaultqos", "default_qos", V_STR, "default QOS"},
    {"qos", "qos", V_STR, "comma-separated allowed QOS"},
    {0},
};

static const struct field filters[] = {
    {"cluster", "cluster", V_STR, "only this cluster"},
    {"account", "account", V_STR, "only this account"},
    {"user", "user", V_STR, "only this user"},
    {"partition", "partition", V_STR, "only this partition's"},
    {0},
};

static const struct column columns[] = {
    {"Cluster", "cluster", C_STR}, {"Account", "account", C_STR},
    {"User", "user", C_STR},       {"Partition", "partition", C_STR},
    {"Shares", "shares", C_INT},   {"DefaultQOS", "default_qos", C_STR},
    {"QOS", "qos", C_STR},         {0},
};

static const struct crud crud = {
    .noun = "assoc",
    .collection = "/v1/assocs",
    .add = add_fields,
    .modify = modify_fields,
    .filters = filters,
    .keys = keys,
    .columns = columns,
    .flags = CRUD_BODY_KEY,
};

const struct cli_command cmd_assoc = {
    .noun = "assoc",
    .summary = "associations: which users may charge which accounts on which cluster",
    .help = "usage: allot assoc add cluster=C account=A user=U [partition=P] [fairshare=N]\n"
            "                       [defaultqos=Q] [qos=Q1,Q2]\n"
            "       allot assoc show [cluster=C] [account=A] [user=U]\n"
            "       allot assoc modify cluster=C account=A user=U [partition=P] key=value...\n"
            "       allot assoc remove cluster=C account=A user=U [partition=P]\n"
            "\n"
            "examples:\n"
            "  allot assoc add cluster=darwin account=chem user=alice fairshare=10\n"
            "  allot assoc show account=chem\n"
            "  allot assoc modify cluster=darwin account=chem user=alice qos=normal,long\n",
    .needs_verb = 1,
    .crud = &crud,
};
