/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * plugin_export.h - marks the symbols a Slurm plugin must export.
 *
 * allot's plugins are built with -fvisibility=hidden so that only the names Slurm looks
 * up with dlsym (plugin_name, plugin_type, plugin_version, init, fini and the type's
 * syms[]) are visible; everything else stays private and cannot clash with slurmctld's
 * own symbols.
 */
#ifndef ALLOT_PLUGINS_PLUGIN_EXPORT_H
#define ALLOT_PLUGINS_PLUGIN_EXPORT_H

#define ALLOT_PLUGIN_EXPORT __attribute__((visibility("default")))

#endif
