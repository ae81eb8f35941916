#!/bin/sh
# Sourced by the ansible tests: the byte offset of a partition of an image
# that image/build made, by its GPT name.
#   part_offset IMAGE NAME   prints the offset in bytes; fails when absent
part_offset() {
	_start=$(sfdisk -d "$1" | sed -n "s/.*start= *\([0-9]*\),.*name=\"$2\".*/\1/p")
	[ -n "$_start" ] || return 1
	echo $((_start * 512))
}
