module dwarfcheck

go 1.19
