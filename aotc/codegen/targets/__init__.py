"""What machine code is generated for, and what the machine it runs on must have.

:mod:`.spec` is the :class:`~.spec.TargetSpec` (CPU, features, optimization level, fast
math) and the LLVM target machine made from it; :mod:`.isa` is the interface code
generators ask about the instruction set; :mod:`.x86` is x86-64's answers, its feature
levels and their CPUID bits (the import-time CPU check).
"""
