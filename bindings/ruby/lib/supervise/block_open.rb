# frozen_string_literal: true

# block_open.rb: Supervise::BlockOpen, the File.open-like constructor of the
# classes that hold a connection (Client, Events).
#
# Design: a class extends BlockOpen to get `open`: it creates an object with
# the arguments of `new`; with a block, it yields the object, closes it when
# the block ends (even by an exception) and returns the block's value;
# without, it returns the object, which the caller closes.
module Supervise
  # The class method `open` of a class whose objects have #close.
  module BlockOpen
    # open creates an object (see the class's #initialize). With a block,
    # it yields the object, closes it when the block ends (even by an
    # exception) and returns the block's value; without, it returns it.
    def open(*args, **opts)
      obj = new(*args, **opts)
      return obj unless block_given?

      begin
        yield obj
      ensure
        obj.close
      end
    end
  end
end
